#!/usr/bin/env bash
# What the .deb holds and declares, then its binaries run from an extracted
# copy (no installation).
# usage: deb_contents.sh DEB_DIR SOURCE_DIR WITH_MAN(0|1) WITH_POLICY(0|1)
set -uo pipefail
deb=$(ls "$1"/*.deb) src=$2 with_man=$3 with_policy=$4
fail=0
problem() { echo "FAIL: $*"; fail=1; }

listing=$(dpkg-deb -c "$deb") || { echo "dpkg-deb -c failed"; exit 1; }
echo "$listing"
has() { # PATH [MODE]: PATH in the package (mode and owner checked if given)
  local line
  line=$(awk -v p="./$1" '$6 == p' <<<"$listing")
  [ -n "$line" ] || { problem "$1 not in the package"; return; }
  if [ $# -gt 1 ]; then
    [ "$(awk '{ print $1, $2 }' <<<"$line")" = "$2 root/root" ] ||
      problem "$1 is '$(awk '{ print $1, $2 }' <<<"$line")', want '$2 root/root'"
  fi
}
has usr/sbin/locusd -rwxr-xr-x
has usr/bin/locusctl -rwxr-xr-x
has usr/lib/systemd/system/locusd.service -rw-r--r--
has usr/lib/sysusers.d/locus.conf -rw-r--r--
has usr/share/bash-completion/completions/locusctl -rw-r--r--
if [ "$with_policy" = 1 ]; then
  has usr/share/locus/policy.yaml -rw-r--r--
else
  echo "note: deploy/policy/nginx.yaml absent at configure time; no policy expected"
fi
if [ "$with_man" = 1 ]; then
  has usr/share/man/man8/locusd.8.gz -rw-r--r--
  has usr/share/man/man8/locusctl.8.gz -rw-r--r--
else
  echo "note: scdoc missing at configure time; man pages not expected"
fi
# Nothing under /etc: the policy is an example, not a conffile.
grep -q ' \./etc/' <<<"$listing" && problem "package installs under /etc"

info=$(dpkg-deb -I "$deb")
echo "$info"
depends=$(dpkg-deb -f "$deb" Depends)
# dpkg-shlibdeps ran: the C++ runtime and gRPC are in Depends.
for lib in libc6 libstdc++6 'libgrpc++'; do
  grep -q "$lib" <<<"$depends" || problem "Depends lacks $lib: '$depends'"
done
grep -qw passwd <<<"$depends" || problem "Depends lacks passwd (groupadd)"
for script in postinst prerm postrm; do
  grep -qE "^ +[0-9]+ bytes, +[0-9]+ lines +\* +$script " <<<"$info" ||
    problem "control archive lacks an executable $script"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp"
dpkg-deb -e "$deb" "$tmp/DEBIAN"
cmp -s "$tmp/usr/lib/systemd/system/locusd.service" "$src/deploy/systemd/locusd.service" ||
  problem "packaged unit differs from deploy/systemd/locusd.service"
if [ "$with_policy" = 1 ]; then
  cmp -s "$tmp/usr/share/locus/policy.yaml" "$src/deploy/policy/nginx.yaml" ||
    problem "packaged policy differs from deploy/policy/nginx.yaml"
fi
grep -q 'groupadd --system locus' "$tmp/DEBIAN/postinst" || problem "postinst does not create the locus group"
for script in postinst prerm postrm; do
  sh -n "$tmp/DEBIAN/$script" || problem "$script: syntax error"
done
# The unit runs what the package installs.
for exe in $(sed -n 's/^Exec[A-Za-z]*=[-@:+!]*\([^ ]*\).*/\1/p' "$tmp/usr/lib/systemd/system/locusd.service" | sort -u); do
  [ -x "$tmp$exe" ] || problem "unit runs $exe, which the package does not install"
done
[ "$with_man" = 1 ] && {
  zcat "$tmp/usr/share/man/man8/locusd.8.gz" | grep -q '^\.TH "locusd" "8"' ||
    problem "locusd.8.gz is not a section 8 man page"
}

# The extracted binaries run (stripped, without the build tree's RPATH).
out=$("$tmp/usr/sbin/locusd" --help 2>&1)
grep -q -- '--probe' <<<"$out" || problem "extracted locusd --help does not describe --probe: $out"
out=$("$tmp/usr/bin/locusctl" --help 2>&1) || problem "extracted locusctl --help failed: $out"
grep -q '^Commands:' <<<"$out" || problem "extracted locusctl --help lists no commands: $out"
readelf -S "$tmp/usr/sbin/locusd" | grep -q '\.symtab' && problem "locusd is not stripped"

[ $fail -eq 0 ] && echo "package contents: ok"
exit $fail
