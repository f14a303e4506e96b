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
has usr/share/zsh/vendor-completions/_locusctl -rw-r--r--
has usr/share/doc/locus/copyright -rw-r--r--
has usr/share/doc/locus/changelog.gz -rw-r--r--
for proto in "$src"/proto/locus/v1/*.proto; do
  has "usr/share/locus/proto/locus/v1/${proto##*/}" -rw-r--r--
done
if [ "$with_policy" = 1 ]; then
  has etc/locus/policy.yaml -rw-r--r--
else
  echo "note: deploy/policy/nginx.yaml absent at configure time; no policy expected"
fi
if [ "$with_man" = 1 ]; then
  has usr/share/man/man8/locusd.8.gz -rw-r--r--
  has usr/share/man/man8/locusctl.8.gz -rw-r--r--
  has usr/share/man/man5/locus-policy.5.gz -rw-r--r--
else
  echo "note: scdoc missing at configure time; man pages not expected"
fi
# Under /etc only the policy, and every file there a conffile (dpkg keeps an
# admin's edits to conffiles only).
in_etc=$(awk '$6 ~ /^\.\/etc\/.*[^/]$/ { print substr($6, 2) }' <<<"$listing")
conffiles=$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles 2>/dev/null)
[ "$in_etc" = "$conffiles" ] || problem "files under /etc '$in_etc' are not the conffiles '$conffiles'"
[ "$with_policy" = 0 ] || [ "$conffiles" = /etc/locus/policy.yaml ] ||
  problem "conffiles is '$conffiles', want /etc/locus/policy.yaml"

info=$(dpkg-deb -I "$deb")
echo "$info"
depends=$(dpkg-deb -f "$deb" Depends)
# dpkg-shlibdeps ran: the C++ runtime, gRPC and /metrics's libmicrohttpd are
# in Depends.
for lib in libc6 libstdc++6 'libgrpc++' libmicrohttpd; do
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
for proto in "$src"/proto/locus/v1/*.proto; do
  cmp -s "$tmp/usr/share/locus/proto/locus/v1/${proto##*/}" "$proto" ||
    problem "packaged ${proto##*/} differs from proto/locus/v1/"
done
cmp -s "$tmp/usr/share/zsh/vendor-completions/_locusctl" "$src/deploy/completion/_locusctl" ||
  problem "packaged zsh completion differs from deploy/completion/_locusctl"
# The conffile is the default policy with every key commented out: only the
# schema version is set, and uncommenting gives the default back, key for key.
if [ "$with_policy" = 1 ]; then
  conf=$tmp/etc/locus/policy.yaml
  set_keys=$(grep -vE '^[[:space:]]*(#|$)' "$conf")
  [ "$set_keys" = "version: 1" ] || problem "the conffile sets more than its version: '$set_keys'"
  diff <(sed '1,/^$/d' "$src/deploy/policy/nginx.yaml") \
    <(sed -e '1,/^$/d' -e 's/^\([[:space:]]*\)#\([^[:space:]#]\)/\1\2/' "$conf") ||
    problem "the conffile, uncommented, is not deploy/policy/nginx.yaml"
  out=$("$tmp/usr/bin/locusctl" policy check "$conf" 2>&1) || problem "the conffile does not validate: $out"
fi
# copyright: machine-readable, GPL-2.0-only (LICENSE; license_test.sh), the
# license text by reference.
copyright=$tmp/usr/share/doc/locus/copyright
head -1 "$copyright" | grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ||
  problem "copyright is not in the machine-readable format"
grep -qx 'License: GPL-2.0-only' "$copyright" || problem "copyright does not declare GPL-2.0-only"
grep -q '/usr/share/common-licenses/GPL-2' "$copyright" || problem "copyright does not point at common-licenses/GPL-2"
# changelog: one entry, for the package's version, that dpkg can parse.
version=$(dpkg-deb -f "$deb" Version)
want_version=$(sed -n 's/^project(locus VERSION \([^ ]*\).*/\1/p' "$src/CMakeLists.txt")
[ "$version" = "$want_version" ] || problem "package version $version, project() says $want_version"
gzip -t "$tmp/usr/share/doc/locus/changelog.gz" || problem "changelog.gz is not gzip"
zcat "$tmp/usr/share/doc/locus/changelog.gz" >"$tmp/changelog"
entry=$(dpkg-parsechangelog -l "$tmp/changelog" -S Version 2>&1) || problem "dpkg-parsechangelog: $entry"
[ "$entry" = "$version" ] || problem "changelog's version is '$entry', the package's $version"
[ "$(dpkg-parsechangelog -l "$tmp/changelog" -S Source 2>/dev/null)" = locus ] ||
  problem "changelog is not locus's"
grep -q 'groupadd --system locus' "$tmp/DEBIAN/postinst" || problem "postinst does not create the locus group"
for script in postinst prerm postrm; do
  sh -n "$tmp/DEBIAN/$script" || problem "$script: syntax error"
done
# The unit runs what the package installs, or what an essential package or
# one in Depends does (/bin/kill, procps, for ExecReload).
for exe in $(sed -n 's/^Exec[A-Za-z]*=[-@:+!]*\([^ ]*\).*/\1/p' "$tmp/usr/lib/systemd/system/locusd.service" | sort -u); do
  [ -x "$tmp$exe" ] && continue
  owner=$(dpkg -S "$exe" 2>/dev/null | head -1 | cut -d: -f1)
  if [ -z "$owner" ]; then
    problem "unit runs $exe, which neither this package nor any installed one holds"
  elif [ "$(dpkg-query -W -f='${Essential}' "$owner")" != yes ] &&
    ! grep -qE "(^|, )$owner( |,|$)" <<<"$depends"; then
    problem "unit runs $exe, from $owner, which is neither essential nor in Depends"
  fi
done
[ "$with_man" = 1 ] && {
  for page in man8/locusd.8 man8/locusctl.8 man5/locus-policy.5; do
    name=${page#*/} && name=${name%.*} section=${page##*.}
    zcat "$tmp/usr/share/man/$page.gz" | grep -q "^\.TH \"$name\" \"$section\"" ||
      problem "$page.gz is not a section $section man page"
  done
}

# The extracted binaries run (stripped, without the build tree's RPATH).
out=$("$tmp/usr/sbin/locusd" --help 2>&1)
grep -q -- '--probe' <<<"$out" || problem "extracted locusd --help does not describe --probe: $out"
out=$("$tmp/usr/bin/locusctl" --help 2>&1) || problem "extracted locusctl --help failed: $out"
grep -q '^Commands:' <<<"$out" || problem "extracted locusctl --help lists no commands: $out"
readelf -S "$tmp/usr/sbin/locusd" | grep -q '\.symtab' && problem "locusd is not stripped"

[ $fail -eq 0 ] && echo "package contents: ok"
exit $fail
