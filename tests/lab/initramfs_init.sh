#!/bin/busybox sh
# shellcheck shell=dash
# /init of the lab guest's initramfs (busybox). Loads the virtio, 9p and
# overlay modules, mounts this machine's root (shared read-only over 9p) under
# a tmpfs overlay, mounts what locusd needs inside it, brings the network up
# and hands over to guest_stage2.sh in the new root. Everything here uses the
# static busybox: under TCG every start of a dynamic binary read over 9p costs
# about a second. Any failure powers the guest off without a status file,
# which guest.sh reports with this console.
/bin/busybox --install -s /bin
export PATH=/bin

fail() {
  echo "lab init: $*" >&2
  dmesg | tail -n 15 >&2
  echo o >/proc/sysrq-trigger
  sleep 60
}

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
# The kernel command line names the run directory and stage two: read it
# before /proc moves into the new root.
for arg in $(cat /proc/cmdline); do
  case "$arg" in
    lab.run=*) run_dir=${arg#lab.run=} ;;
    lab.stage2=*) stage2=${arg#lab.stage2=} ;;
    lab.upper_mb=*) upper_mb=${arg#lab.upper_mb=} ;;
  esac
done
[ -n "$run_dir" ] && [ -n "$stage2" ] || fail "lab.run= or lab.stage2= missing"

while read -r module; do
  insmod "/modules/$module" || fail "insmod $module"
done </modules/order

p9="trans=virtio,version=9p2000.L,msize=262144"
mkdir -p /mnt/lower /mnt/rw /mnt/root
# The root is read-only and unchanged while the guest runs: cache it.
mount -t 9p -o "$p9,cache=loose" hostroot /mnt/lower || fail "cannot mount the host root over 9p"
mount -t tmpfs -o "size=${upper_mb:-512}m" upper /mnt/rw || fail "tmpfs"
mkdir -p /mnt/rw/upper /mnt/rw/work
mount -t overlay overlay \
  -o lowerdir=/mnt/lower,upperdir=/mnt/rw/upper,workdir=/mnt/rw/work /mnt/root ||
  fail "cannot mount the overlay"
r=/mnt/root
# The run directory is shared writable: the command's output and status go
# straight to the caller's files.
mount -t 9p -o "$p9" labrun "$r$run_dir" || fail "cannot mount the run directory"

mount -t proc proc $r/proc
mount -t sysfs sys $r/sys
mount -t devtmpfs dev $r/dev
mkdir -p $r/dev/pts $r/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $r/dev/pts
mount -t tmpfs -o mode=1777 shm $r/dev/shm
mount -t tmpfs -o mode=755 run $r/run
mount -t tmpfs -o mode=1777 tmp $r/tmp
mount -t tracefs tracefs $r/sys/kernel/tracing
mount -t debugfs debugfs $r/sys/kernel/debug
mount -t bpf bpf $r/sys/fs/bpf
mount -t cgroup2 cgroup2 $r/sys/fs/cgroup
ln -sf /proc/self/fd $r/dev/fd
ln -sf /proc/self/fd/0 $r/dev/stdin
ln -sf /proc/self/fd/1 $r/dev/stdout
ln -sf /proc/self/fd/2 $r/dev/stderr
mkdir -p $r/run/lock $r/run/locus $r/run/nginx $r/var/lib/locus $r/var/log/nginx
# Extra shares the caller asked for (guest.sh --share), writable, same path;
# last, so that one under /tmp or /run is not hidden.
if [ -f "$r$run_dir/shares" ]; then
  while read -r tag path; do
    mkdir -p "$r$path"
    mount -t 9p -o "$p9" "$tag" "$r$path" || fail "cannot mount share $path"
  done <"$r$run_dir/shares"
fi

hostname lab
ip link set lo up
# QEMU user networking: guest 10.0.2.15, gateway (this machine's loopback as
# seen from the guest) 10.0.2.2.
nic=
for dev in /sys/class/net/*; do
  [ "${dev##*/}" = lo ] || { nic=${dev##*/}; break; }
done
if [ -n "$nic" ]; then
  ip link set "$nic" up
  ip addr add 10.0.2.15/24 dev "$nic"
  ip route add default via 10.0.2.2
fi

umount /proc /sys /dev 2>/dev/null
exec chroot $r /bin/bash "$stage2" "$run_dir" "$nic"
