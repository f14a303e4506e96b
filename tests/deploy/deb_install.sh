#!/usr/bin/env bash
# Installs the .deb on this machine, checks what the maintainer scripts did and
# that the installed `locusd --probe` works, then purges it and removes the
# `locus` group if this test created it: the machine is left as it was.
# usage: deb_install.sh DEB_DIR WITH_MAN(0|1)   (root; skipped if locus is installed)
set -uo pipefail
deb=$(ls "$1"/*.deb) with_man=${2:-0}
skip=77
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root (dpkg -i)"; exit $skip; }
if dpkg-query -W -f='${Status}' locus 2>/dev/null | grep -q 'install ok'; then
  echo "skipped: a locus package is installed already; not touching it"
  exit $skip
fi
had_group=0
getent group locus >/dev/null && had_group=1
fail=0
problem() { echo "FAIL: $*"; fail=1; }
cleanup() {
  dpkg -P locus >/dev/null 2>&1
  [ $had_group -eq 0 ] && getent group locus >/dev/null && groupdel locus
}
trap cleanup EXIT

dpkg -i "$deb" || { echo "dpkg -i failed"; exit 1; }
getent group locus >/dev/null || problem "postinst did not create the locus group"
[ -f /usr/lib/systemd/system/locusd.service ] || problem "unit not installed"
if [ "$with_man" = 1 ]; then
  for page in locusd locusctl; do
    [ "$(man -w "$page" 2>/dev/null)" = "/usr/share/man/man8/$page.8.gz" ] ||
      problem "man -w $page does not find the installed page"
  done
fi
# Installing again (same version: an upgrade for the maintainer scripts)
# works with the group already there.
dpkg -i "$deb" >/dev/null || problem "second dpkg -i failed"
out=$(/usr/sbin/locusd --probe 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || problem "installed locusd --probe exited $rc"
# The probe names the sensors' sources; at least one BPF kind loads here.
grep -qiE 'tp_btf|raw_tp' <<<"$out" || problem "locusd --probe printed no BPF feature"
out=$(/usr/bin/locusctl --help 2>&1) || problem "installed locusctl --help failed"

dpkg -P locus || problem "dpkg -P locus failed"
for f in /usr/sbin/locusd /usr/bin/locusctl /usr/lib/systemd/system/locusd.service; do
  [ ! -e "$f" ] || problem "$f left behind after purge"
done
[ $fail -eq 0 ] && echo "install, probe, purge: ok"
exit $fail
