#!/usr/bin/env bash
# deploy/deps.sh installs per use (build / test / lab) and leaves no service
# enabled that was not enabled before. The service bookkeeping runs on a fake
# root, so this needs neither apt nor root.
set -euo pipefail
deps=${1:?usage: deps_test.sh DEPS_SH}
fail() { echo "FAIL: $*" >&2; exit 1; }

build=$("$deps" --list build)
test_set=$("$deps" --list test)
lab=$("$deps" --list lab)
for p in qemu-system-x86 linux-image-amd64 irqbalance numad nginx-light libgtest-dev; do
  grep -qx "$p" <<<"$build" && fail "the build set installs $p"
done
for p in qemu-system-x86 linux-image-amd64 linux-image-6.12-amd64 irqbalance numad; do
  grep -qx "$p" <<<"$test_set" && fail "the test set installs $p"
  grep -qx "$p" <<<"$lab" || fail "the lab set lacks $p"
done
for p in cmake libbpf-dev bpftool; do
  grep -qx "$p" <<<"$build" || fail "the build set lacks $p"
  grep -qx "$p" <<<"$test_set" || fail "the test set lacks $p (it builds too)"
done
status=0
"$deps" bogus 2>/dev/null || status=$?
[ "$status" -eq 2 ] || fail "an unknown set exits $status, not 2"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/lib/systemd/system" "$root/etc/systemd/system/multi-user.target.wants"
for unit in nginx irqbalance numad; do
  touch "$root/lib/systemd/system/$unit.service"
done
wants=$root/etc/systemd/system/multi-user.target.wants
ln -s /lib/systemd/system/nginx.service "$wants/nginx.service"
# shellcheck source=/dev/null
source "$deps"
mapfile -t before < <(enabled_units "$root")
[ "${before[*]}" = nginx.service ] || fail "enabled before: '${before[*]}'"
# What the packages' postinst does: enable on install.
ln -s /lib/systemd/system/irqbalance.service "$wants/irqbalance.service"
ln -s /lib/systemd/system/numad.service "$wants/numad.service"
disable_new_units "$root" "${before[@]}"
[ -e "$wants/nginx.service" ] || fail "nginx, enabled before, was disabled"
[ -e "$wants/irqbalance.service" ] && fail "irqbalance, enabled by its install, stays enabled"
[ -e "$wants/numad.service" ] && fail "numad, enabled by its install, stays enabled"
# The lab's kernels get no initramfs only where no boot loader could boot them.
no_boot_loader "$root" || fail "a root without a boot loader is said to have one"
for loader in boot/grub boot/efi/EFI boot/loader; do
  mkdir -p "$root/$loader"
  no_boot_loader "$root" && fail "a root with $loader is said to have no boot loader"
  rm -rf "${root:?}/$loader"
done
echo "deps_test: ok"
