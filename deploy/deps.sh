#!/usr/bin/env bash
# Installs the Debian packages one use of Locus needs, and nothing more:
#   deploy/deps.sh build       build locusd and locusctl (deploy/quickstart.sh)
#   deploy/deps.sh test        build, and run every test label but lab
#   deploy/deps.sh lab         the multi-NUMA QEMU lab and its benchmarks
#   deploy/deps.sh --list SET  print a set's packages, install nothing
# Sets may be combined (tests/run.sh asks for `test lab`). Running locusd from
# the .deb needs none of this: apt installs its libraries.
# Idempotent: packages already present are skipped without touching apt.
# Services a package enables or starts on install (nginx, irqbalance, numad,
# haproxy) are put back as they were: disabled and stopped unless they were
# enabled before. The tests and the lab start their own nginx, irqbalance,
# numad and haproxy, and a second balancer left running would fight the agent
# being tested.
set -euo pipefail

build=(
  # toolchain
  build-essential cmake ninja-build pkg-config clang llvm clang-format
  # BPF: libbpf, bpftool (skeletons, vmlinux.h), kernel UAPI headers
  libbpf-dev bpftool libelf-dev zlib1g-dev linux-libc-dev
  # libraries
  libabsl-dev libprotobuf-dev protobuf-compiler libgrpc++-dev protobuf-compiler-grpc
  libyaml-cpp-dev libsystemd-dev libnuma-dev
  # Student's t and normal quantiles for the experiment's estimate (headers)
  libboost-dev
  # Prometheus client library (registry, text format) and the HTTP server of
  # /metrics (IPv6, per-peer connection limits, timeouts)
  prometheus-cpp-dev libmicrohttpd-dev
  # man pages (built with the binaries, shown by `man locusd`)
  scdoc
)
test=(
  "${build[@]}"
  # unit and privileged tests, benchmarks, the function-size check (ctags)
  libgtest-dev libgmock-dev libbenchmark-dev nginx-light wrk numactl procps util-linux
  iproute2 universal-ctags python3-h2
  # a compiler cache: the second build tree and later checkouts reuse objects
  ccache
  # the metrics read by real consumers: the exposition parser, promtool
  python3-prometheus-client prometheus
  # deploy: unit checks, manifest checks, man pages
  systemd python3-yaml man-db lintian zsh
  # fuzzing and sanitizers: clang's libFuzzer, ASan and UBSan runtimes
  libclang-rt-14-dev
)
lab=(
  # guests under QEMU booting Debian's 6.1 and 6.12 kernels on this machine's
  # root; the tools Locus is compared with; the benchmark's plot
  qemu-system-x86 linux-image-amd64 linux-image-6.12-amd64 busybox-static irqbalance numad
  gnuplot-nox
  # a server whose workers are threads (scenario_threads.sh)
  haproxy
)
# Units that Debian's packages enable (and start) when installed.
services=(nginx.service irqbalance.service numad.service prometheus.service haproxy.service)

usage() {
  sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# wants_dir ROOT: where `systemctl enable` links the units of multi-user.target.
wants_dir() { echo "$1/etc/systemd/system/multi-user.target.wants"; }

# enabled_units ROOT: those of $services that are enabled under ROOT now.
enabled_units() {
  local unit
  for unit in "${services[@]}"; do
    [ -e "$(wants_dir "$1")/$unit" ] && echo "$unit"
  done
  return 0
}

# disable_new_units ROOT UNIT_ENABLED_BEFORE...: disables (and on a running
# systemd, stops) every installed unit of $services not named: enabling is not
# a start, so policy-rc.d does not prevent it.
disable_new_units() {
  local root=$1 unit
  shift
  for unit in "${services[@]}"; do
    [[ " $* " == *" $unit "* ]] && continue
    [ -e "$root/lib/systemd/system/$unit" ] || [ -e "$root/usr/lib/systemd/system/$unit" ] || continue
    # deb-systemd-helper also forgets that the package enabled it, so an
    # upgrade does not enable it again; it only knows the real root.
    if [ "$root" = / ] && command -v deb-systemd-helper >/dev/null; then
      deb-systemd-helper disable "$unit" >/dev/null 2>&1 || true
    fi
    rm -f "$(wants_dir "$root")/$unit"
    if [ "$root" = / ] && [ -d /run/systemd/system ]; then
      systemctl stop "$unit" >/dev/null 2>&1 || true
    fi
  done
}

# no_boot_loader ROOT: nothing under ROOT boots a kernel from /boot (no GRUB,
# no EFI system partition, no systemd-boot or extlinux entries).
no_boot_loader() {
  local path
  for path in boot/grub boot/grub2 boot/efi/EFI boot/loader efi boot/extlinux; do
    [ -e "$1/$path" ] && return 1
  done
  return 0
}

main() {
  local list=0 set p
  if [ "${1:-}" = --list ]; then
    list=1
    shift
  fi
  [ $# -gt 0 ] || usage
  local packages=()
  for set in "$@"; do
    case "$set" in
      build) packages+=("${build[@]}") ;;
      test) packages+=("${test[@]}") ;;
      lab) packages+=("${lab[@]}") ;;
      *) echo "deps.sh: unknown set '$set' (build, test, lab)" >&2; usage ;;
    esac
  done
  mapfile -t packages < <(printf '%s\n' "${packages[@]}" | sort -u)
  if [ $list -eq 1 ]; then
    printf '%s\n' "${packages[@]}"
    return 0
  fi

  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "deps.sh: missing packages (${missing[*]}); run as root to install them" >&2
    return 1
  fi

  local before
  mapfile -t before < <(enabled_units /)
  # policy-rc.d keeps maintainer scripts from starting services (invoke-rc.d
  # and deb-systemd-invoke ask it); one the admin put there is left alone.
  local policy_rc=/usr/sbin/policy-rc.d own_policy_rc=0
  if [ ! -e "$policy_rc" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy_rc"
    chmod 0755 "$policy_rc"
    own_policy_rc=1
  fi
  local rc=0
  export DEBIAN_FRONTEND=noninteractive
  # The lab's kernels boot only its guests, each from an initramfs the lab
  # builds itself (tests/lab/guest.sh). Where no boot loader boots this
  # machine from /boot (a VM or container started with its kernel given),
  # the initramfs their packages would build (about a minute per kernel,
  # twice for the newest) serves nothing; where one does, it is built as
  # ever, since the loader's next boot may take the newest kernel.
  no_boot_loader / && export INITRD=No
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } || rc=$?
  [ $own_policy_rc -eq 1 ] && rm -f "$policy_rc"
  disable_new_units / "${before[@]}"
  return $rc
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  main "$@"
fi
