#!/usr/bin/env bash
# `systemd-analyze verify` is clean on the unit, its man page references
# included. verify insists that ExecStart= binaries exist, so it checks a copy
# whose /usr/sbin/locusd points at the built binary; the man pages it looks up
# with man(1) are the built ones (MANPATH).
# usage: unit_verify.sh UNIT LOCUSD MAN_DIR   (MAN_DIR empty: scdoc missing)
set -euo pipefail
unit=$1 locusd=$2 mandir=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -x "$locusd" ] || { echo "locusd not built: $locusd"; exit 1; }
grep -q '^ExecStart=/usr/sbin/locusd' "$unit" || {
  echo "$unit: ExecStart is not /usr/sbin/locusd, where the package puts it"
  exit 1
}
# `systemctl reload` needs ExecReload=; locusd reloads its policy on SIGHUP.
grep -qx 'ExecReload=/bin/kill -HUP $MAINPID' "$unit" || {
  echo "$unit: no ExecReload= that sends SIGHUP: systemctl reload would fail"
  exit 1
}
grep -qx 'EnvironmentFile=-/etc/default/locusd' "$unit" &&
  grep -q '^ExecStart=/usr/sbin/locusd \$LOCUSD_OPTS$' "$unit" || {
  echo "$unit: extra flags from /etc/default/locusd (LOCUSD_OPTS) are not passed"
  exit 1
}
sed "s#/usr/sbin/locusd#$locusd#g" "$unit" >"$tmp/$(basename "$unit")"

man_opt=--man=yes
if [ -n "$mandir" ]; then
  export MANPATH=$mandir
else
  echo "note: man pages not built (scdoc missing); not checking Documentation="
  man_opt=--man=no
fi
if ! out=$(systemd-analyze verify "$man_opt" "$tmp/$(basename "$unit")" 2>&1) || [ -n "$out" ]; then
  echo "systemd-analyze verify $unit:"
  echo "$out"
  exit 1
fi
echo "systemd-analyze verify: clean"
