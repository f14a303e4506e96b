#!/usr/bin/env bash
# Installs the .deb on this machine, checks what the maintainer scripts did
# (the group; the unit known to deb-systemd-helper but left disabled; an
# enabled unit kept enabled by an upgrade), that the conffile keeps an admin's
# edit and that the installed `locusd --probe` works, then purges it (which
# must remove the conffile and the unit's symlinks) and removes the `locus`
# group if this test created it: the machine is left as it was.
# usage: deb_install.sh DEB_DIR WITH_MAN(0|1)   (root; skipped if locus is installed)
set -uo pipefail
deb=$(ls "$1"/*.deb) with_man=${2:-0}
skip=77
unit=locusd.service
wants=/etc/systemd/system/multi-user.target.wants/$unit
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root (dpkg -i)"; exit $skip; }
if dpkg-query -W -f='${Status}' locus 2>/dev/null | grep -q 'install ok'; then
  echo "skipped: a locus package is installed already; not touching it"
  exit $skip
fi
for f in /etc/locus/policy.yaml "$wants"; do
  if [ -e "$f" ] || [ -L "$f" ]; then
    echo "skipped: $f exists already (not the package's); not touching it"
    exit $skip
  fi
done
had_group=0 had_wants_dir=0
getent group locus >/dev/null && had_group=1
[ -d "${wants%/*}" ] && had_wants_dir=1
fail=0
problem() { echo "FAIL: $*"; fail=1; }
# deb-systemd-helper answers only maintainer scripts; these are queries.
dsh() { DPKG_MAINTSCRIPT_PACKAGE=locus deb-systemd-helper "$@"; }
cleanup() {
  dpkg -P locus >/dev/null 2>&1
  rm -f "$wants"
  [ $had_wants_dir -eq 1 ] || rmdir "${wants%/*}" 2>/dev/null
  [ $had_group -eq 0 ] && getent group locus >/dev/null && groupdel locus
}
trap cleanup EXIT

dpkg -i "$deb" || { echo "dpkg -i failed"; exit 1; }
getent group locus >/dev/null || problem "postinst did not create the locus group"
[ -f /usr/lib/systemd/system/$unit ] || problem "unit not installed"
# A fresh install registers the unit but neither enables nor starts it.
dsh debian-installed $unit || problem "postinst did not register $unit with deb-systemd-helper"
dsh --quiet is-enabled $unit && problem "a fresh install enabled $unit"
[ -L "$wants" ] && problem "a fresh install linked $wants"
if [ -d /run/systemd/system ]; then
  systemctl is-active --quiet $unit && problem "a fresh install started $unit"
fi
dpkg-query -W -f='${Conffiles}' locus | grep -q '^ /etc/locus/policy.yaml ' ||
  problem "/etc/locus/policy.yaml is not a conffile: $(dpkg-query -W -f='${Conffiles}' locus)"
out=$(/usr/sbin/locusd --check_policy=/etc/locus/policy.yaml 2>&1) || problem "installed policy does not validate: $out"
if [ "$with_man" = 1 ]; then
  for page in man8/locusd.8 man8/locusctl.8 man5/locus-policy.5; do
    name=${page#*/}
    [ "$(man -w "${name##*.}" "${name%.*}" 2>/dev/null)" = "/usr/share/man/$page.gz" ] ||
      problem "man -w ${name##*.} ${name%.*} does not find the installed page"
  done
fi
# Installing again (same version: an upgrade for the maintainer scripts)
# works with the group already there, keeps the admin's edit of the policy,
# and keeps the unit enabled when the admin enabled it (the link below is
# what `systemctl enable locusd` makes).
echo "# edited by deb_install.sh" >>/etc/locus/policy.yaml
mkdir -p "${wants%/*}"
ln -s /usr/lib/systemd/system/$unit "$wants"
dpkg -i "$deb" >/dev/null || problem "second dpkg -i failed"
grep -q '^# edited by deb_install.sh' /etc/locus/policy.yaml || problem "the upgrade replaced the edited policy"
[ -L "$wants" ] || problem "the upgrade disabled $unit"
dsh --quiet was-enabled $unit || problem "deb-systemd-helper does not know $unit was enabled"
out=$(/usr/sbin/locusd --probe 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || problem "installed locusd --probe exited $rc"
# The probe names the sensors' sources; at least one BPF kind loads here.
grep -qiE 'tp_btf|raw_tp' <<<"$out" || problem "locusd --probe printed no BPF feature"
out=$(/usr/bin/locusctl --help 2>&1) || problem "installed locusctl --help failed"

dpkg -P locus || problem "dpkg -P locus failed"
for f in /usr/sbin/locusd /usr/bin/locusctl /usr/lib/systemd/system/$unit /etc/locus/policy.yaml "$wants"; do
  [ ! -e "$f" ] && [ ! -L "$f" ] || problem "$f left behind after purge"
done
dsh debian-installed $unit && problem "deb-systemd-helper still knows $unit after purge"
[ $fail -eq 0 ] && echo "install, probe, purge: ok"
exit $fail
