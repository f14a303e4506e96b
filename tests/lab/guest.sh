#!/bin/bash
# Boots a multi-NUMA QEMU guest (TCG) on this machine's own root filesystem and
# runs ONE command inside it; prints the command's stdout and stderr as it
# runs, exits with its exit status, then the guest is gone.
#
#   tests/lab/guest.sh [options] [--] COMMAND [ARG...]
#
# Options (each also settable by the environment variable in brackets):
#   --kernel 6.1|6.12|VERSION  kernel from /boot (newest match)      [LAB_KERNEL=6.1]
#   --nodes N                  NUMA nodes                            [LAB_NODES=2]
#   --cpus-per-node C          vCPUs per node                        [LAB_CPUS_PER_NODE=2]
#   --mem MiB                  guest memory, split evenly over nodes [LAB_MEM_MB=2048]
#   --memory-node MiB          one more node (id = --nodes) with this much
#                              memory and no CPUs, slower than the others by
#                              HMAT (-machine hmat=on; its initiator is node
#                              0), so that a kernel that ranks memory by HMAT
#                              puts it in a lower memory tier; 0: none, --mem
#                              is still split over the CPU nodes only
#                                                          [LAB_MEMORY_NODE_MB=0]
#   --timeout S                kill the guest after S seconds        [LAB_TIMEOUT=600]
#   --build DIR                build tree (initramfs cache, runs)    [LOCUS_BUILD_DIR=build]
#   --forward GUESTPORT        forward a free port of this machine's loopback to
#                              GUESTPORT in the guest; inside, LAB_FWD_<GUESTPORT>
#                              holds the port (reach it at 10.0.2.2:$LAB_FWD_<GUESTPORT>,
#                              which sends the traffic through the guest's NIC)
#   --share DIR                DIR writable in the guest at the same path (results)
#   --append ARGS              extra kernel command line            [LAB_APPEND]
#   --keep                     keep the run directory (console log)  [LAB_KEEP=1]
#   --tcg multi|single         one host thread per vCPU, or one for all
#                              (no vCPU can then run code another one is
#                              patching; half the speed on 2 CPUs)  [LAB_TCG=multi]
#
# Inside the guest: the command runs as root with the caller's environment and
# working directory; / is this machine's root read-only under a tmpfs overlay
# (writes are lost at power-off); proc, sys, devtmpfs, devpts, /dev/shm, /run,
# /tmp, tracefs, debugfs, bpffs and cgroup2 are mounted; the NIC (LAB_NIC) has
# 10.0.2.15/24 (LAB_GUEST_ADDR), gateway 10.0.2.2 (LAB_HOST_ADDR); LAB_GUEST=1.
# The kernel's defaults stand (numa_balancing is on in Debian's kernels).
#
# Exit status: the command's; 124 when the guest timed out (killed); 125 when
# the harness failed (bad arguments, guest died without a status: the guest
# console's tail is printed); 77 when this machine lacks what a guest needs
# (qemu, the kernel, busybox: deploy/deps.sh installs them), so that ctest
# reports the test as skipped.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
kernel=${LAB_KERNEL:-6.1}
nodes=${LAB_NODES:-2}
cpus_per_node=${LAB_CPUS_PER_NODE:-2}
mem_mb=${LAB_MEM_MB:-2048}
memory_node_mb=${LAB_MEMORY_NODE_MB:-0}
timeout_s=${LAB_TIMEOUT:-600}
build=${LOCUS_BUILD_DIR:-$repo/build}
append=${LAB_APPEND:-}
keep=${LAB_KEEP:-0}
tcg=${LAB_TCG:-multi}
forwards=()
shares=()

die() {
  echo "guest.sh: $*" >&2
  exit 125
}
skip() {
  echo "guest.sh: SKIP: $*" >&2
  exit 77
}

while [ $# -gt 0 ]; do
  case "$1" in
    --kernel) kernel=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --cpus-per-node) cpus_per_node=$2; shift 2 ;;
    --mem) mem_mb=$2; shift 2 ;;
    --memory-node) memory_node_mb=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --forward) forwards+=("$2"); shift 2 ;;
    --share) mkdir -p "$2" && shares+=("$(realpath "$2")"); shift 2 ;;
    --append) append="$append $2"; shift 2 ;;
    --keep) keep=1; shift ;;
    --tcg) tcg=$2; shift 2 ;;
    --) shift; break ;;
    -*) die "unknown option $1 (see the header of $0)" ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || die "no command given"
[[ "$nodes" =~ ^[1-9][0-9]*$ && "$cpus_per_node" =~ ^[1-9][0-9]*$ ]] ||
  die "--nodes and --cpus-per-node must be positive integers"
[[ "$tcg" == multi || "$tcg" == single ]] || die "--tcg must be multi or single, not $tcg"
[[ "$memory_node_mb" =~ ^[0-9]+$ ]] || die "--memory-node takes MiB (0: none)"
(( mem_mb % nodes == 0 )) || die "--mem ($mem_mb) must divide evenly over $nodes nodes"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 missing (deploy/deps.sh)"
[ -x /bin/busybox ] || skip "busybox missing (deploy/deps.sh installs busybox-static)"

# Kernel: an exact version, or the newest installed one of that series.
if [ -f "/boot/vmlinuz-$kernel" ]; then
  kver=$kernel
else
  kver=$(ls /boot 2>/dev/null | sed -n "s/^vmlinuz-\(${kernel//./\\.}[.-].*\)$/\1/p" |
    sort -V | tail -n1)
fi
[ -n "$kver" ] && [ -f "/boot/vmlinuz-$kver" ] && [ -d "/lib/modules/$kver" ] ||
  skip "no kernel $kernel in /boot and /lib/modules (deploy/deps.sh installs them)"

mkdir -p "$build/lab" || die "cannot create $build/lab"
build=$(cd "$build" && pwd)

# The initramfs: busybox, the modules the root needs (dependency order, from
# modprobe), /init. Rebuilt when /init or the kernel's modules change.
initramfs_for() {
  local kver=$1 key out tmp m
  # Loaded in this order (with their dependencies); built-ins are skipped.
  local modules="virtio_pci 9pnet_virtio 9p overlay virtio_net"
  key=$( { cat "$repo/tests/lab/initramfs_init.sh"; echo "$kver $modules";
           stat -c %Y "/lib/modules/$kver/modules.dep" /bin/busybox; } | sha1sum | cut -c1-12)
  out="$build/lab/initramfs-$kver-$key.cpio.gz"
  if [ ! -s "$out" ]; then
    tmp=$(mktemp -d "$build/lab/initramfs.XXXXXX") || return 1
    mkdir -p "$tmp"/{bin,proc,sys,dev,mnt,modules}
    cp /bin/busybox "$tmp/bin/busybox"
    ln -s busybox "$tmp/bin/sh"
    cp "$repo/tests/lab/initramfs_init.sh" "$tmp/init"
    chmod 755 "$tmp/init"
    for m in $modules; do
      modprobe -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
    done | awk '!seen[$0]++' | while read -r path; do
      name=$(basename "$path")
      case "$name" in
        *.ko.xz) xz -dc "$path" >"$tmp/modules/${name%.xz}"; name=${name%.xz} ;;
        *.ko.zst) zstd -qdc "$path" >"$tmp/modules/${name%.zst}"; name=${name%.zst} ;;
        *) cp "$path" "$tmp/modules/$name" ;;
      esac
      echo "$name" >>"$tmp/modules/order"
    done
    [ -s "$tmp/modules/order" ] || { rm -rf "$tmp"; return 1; }
    rm -f "$build/lab/initramfs-$kver-"*.cpio.gz
    (cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) >"$out.tmp" &&
      mv "$out.tmp" "$out"
    rm -rf "$tmp"
  fi
  echo "$out"
}
initramfs=$(exec 9>"$build/lab/.lock" && flock 9 && initramfs_for "$kver") ||
  die "cannot build the initramfs for $kver"
[ -s "$initramfs" ] || die "cannot build the initramfs for $kver"

run_dir=$(mktemp -d "$build/lab/run.XXXXXX") || die "cannot create a run directory"
qemu_pid=
cleanup() {
  [ -n "$qemu_pid" ] && kill -9 "$qemu_pid" 2>/dev/null
  if [ "$keep" = 1 ]; then
    echo "guest.sh: run directory kept: $run_dir" >&2
  else
    rm -rf "$run_dir"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# What stage two needs: the command, the environment, the working directory.
printf '%q ' "$@" >"$run_dir/command"
echo >>"$run_dir/command"
pwd >"$run_dir/cwd"
export -p | grep -Ev '^declare -x (PWD|OLDPWD|SHLVL|_)=' >"$run_dir/env"
: >"$run_dir/stdout"
: >"$run_dir/stderr"

netdev="user,id=n0"
for guest_port in "${forwards[@]}"; do
  [[ "$guest_port" =~ ^[0-9]+$ ]] || die "--forward takes a guest port number"
  host_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
    die "cannot find a free port"
  netdev+=",hostfwd=tcp:127.0.0.1:${host_port}-:${guest_port}"
  echo "declare -x LAB_FWD_${guest_port}=\"${host_port}\"" >>"$run_dir/env"
done

numa=()
for ((n = 0; n < nodes; n++)); do
  first=$((n * cpus_per_node))
  numa+=(-object "memory-backend-ram,size=$((mem_mb / nodes))M,id=m$n"
         -numa "node,nodeid=$n,cpus=$first-$((first + cpus_per_node - 1)),memdev=m$n")
done
# The memory node: no CPUs, its initiator node 0, and HMAT latencies and
# bandwidths (every CPU node to every node) that make it three times slower
# than a CPU node's own memory (a CXL expander's ratio, about): Linux 6.9
# and later rank nodes into memory tiers by these (memory_tier4 for DRAM).
# A remote CPU node reads twice the local latency, half the bandwidth.
machine=(-machine pc)
total_mb=$mem_mb
if [ "$memory_node_mb" -gt 0 ]; then
  total_mb=$((mem_mb + memory_node_mb))
  machine=(-machine "pc,hmat=on")
  numa+=(-object "memory-backend-ram,size=${memory_node_mb}M,id=m$nodes"
         -numa "node,nodeid=$nodes,memdev=m$nodes,initiator=0")
  for ((i = 0; i < nodes; i++)); do
    for ((t = 0; t <= nodes; t++)); do
      if [ "$t" = "$nodes" ]; then
        lat=30 bw=6G # from its initiator, node 0; others read it farther
        [ "$i" = 0 ] || lat=40 bw=5G
      elif [ "$t" = "$i" ]; then
        lat=10 bw=20G
      else
        lat=20 bw=10G
      fi
      numa+=(-numa "hmat-lb,initiator=$i,target=$t,hierarchy=memory,data-type=access-latency,latency=$lat"
             -numa "hmat-lb,initiator=$i,target=$t,hierarchy=memory,data-type=access-bandwidth,bandwidth=$bw")
    done
  done
fi
share_args=()
i=0
for dir in "${shares[@]}"; do
  share_args+=(-virtfs "local,path=$dir,mount_tag=share$i,security_model=none,multidevs=remap")
  echo "share$i $dir" >>"$run_dir/shares"
  i=$((i + 1))
done

cmdline="console=ttyS0 loglevel=0 panic=-1 lab.run=$run_dir lab.stage2=$repo/tests/lab/guest_stage2.sh $append"
timeout --kill-after=10 "$timeout_s" qemu-system-x86_64 \
  -nodefaults -no-user-config -display none -no-reboot \
  -accel "tcg,thread=$tcg" -cpu max -bios /usr/share/qemu/qboot.rom \
  "${machine[@]}" -smp $((nodes * cpus_per_node)) -m "${total_mb}M" "${numa[@]}" \
  -kernel "/boot/vmlinuz-$kver" -initrd "$initramfs" -append "$cmdline" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs "local,path=$run_dir,mount_tag=labrun,security_model=none,multidevs=remap" \
  "${share_args[@]}" \
  -netdev "$netdev" -device virtio-net-pci,netdev=n0 \
  -serial "file:$run_dir/console.log" -monitor none \
  </dev/null >"$run_dir/qemu.log" 2>&1 &
qemu_pid=$!

# Stream the command's output while the guest runs.
tail -q -n +1 -f --pid="$qemu_pid" "$run_dir/stdout" &
tail_out=$!
tail -q -n +1 -f --pid="$qemu_pid" "$run_dir/stderr" >&2 &
tail_err=$!
wait "$qemu_pid"
qemu_rc=$?
qemu_pid=
wait "$tail_out" "$tail_err"

console_tail() {
  echo "--- guest console (last lines), qemu exit $qemu_rc:" >&2
  tail -n 30 "$run_dir/console.log" "$run_dir/qemu.log" >&2
}
if [ -f "$run_dir/status" ]; then
  exit "$(cat "$run_dir/status")"
fi
if [ "$qemu_rc" -eq 124 ] || [ "$qemu_rc" -eq 137 ]; then
  echo "guest.sh: TIMEOUT: the guest ran past ${timeout_s}s and was killed" >&2
  console_tail
  exit 124
fi
echo "guest.sh: the guest stopped without the command's exit status" >&2
console_tail
exit 125
