#!/usr/bin/env bash
# Installs every Debian package that building, testing and running Locus needs.
# Idempotent: packages already present are skipped without touching apt.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config clang llvm clang-format
  # BPF: libbpf, bpftool (skeletons, vmlinux.h), kernel UAPI headers
  libbpf-dev bpftool libelf-dev zlib1g-dev linux-libc-dev
  # libraries
  libabsl-dev libprotobuf-dev protobuf-compiler libgrpc++-dev protobuf-compiler-grpc
  libyaml-cpp-dev libsystemd-dev libnuma-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev nginx-light wrk numactl procps util-linux iproute2
  # deploy: man pages, unit checks, manifest checks
  scdoc systemd python3-yaml man-db
  # fuzzing and sanitizers: clang's libFuzzer, ASan and UBSan runtimes
  libclang-rt-14-dev
  # multi-NUMA lab: guests under QEMU booting Debian's 6.1 and 6.12 kernels on this
  # machine's root; the tools Locus is compared with; the benchmark's plot
  qemu-system-x86 linux-image-amd64 linux-image-6.12-amd64 busybox-static irqbalance numad
  gnuplot-nox
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "deps.sh: missing packages (${missing[*]}); run as root to install them" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
