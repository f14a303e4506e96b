#!/usr/bin/env bash
# The man pages document what the binaries accept: every flag defined in
# agent/main/ is in locusd(8), every command of `locusctl --help` is in
# locusctl(8); and the built pages format without groff warnings.
# usage: man_pages_test.sh SOURCE_DIR MAN_DIR LOCUSCTL  (MAN_DIR empty: no scdoc)
set -uo pipefail
src=$1 mandir=$2 locusctl=$3
fail=0
problem() { echo "FAIL: $*"; fail=1; }

flags=$(cat "$src"/agent/main/*.cc | tr -d '\n' |
  grep -oE 'ABSL_FLAG\([^,]+, *[a-z_0-9]+' | sed 's/.*, *//' | sort -u)
[ -n "$flags" ] || problem "no ABSL_FLAG found in agent/main/"
for f in $flags; do
  grep -q -- "\*--$f\*" "$src/deploy/man/locusd.8.scd" || problem "locusd(8) does not document --$f"
done
# Where the page states a flag's default, it is the one in the source.
stale=$(/usr/bin/python3 - "$src" <<'PY'
import glob, re, sys
src = sys.argv[1]
code = " ".join(open(f).read() for f in glob.glob(src + "/agent/main/*.cc"))
page = open(src + "/deploy/man/locusd.8.scd").read()
for name, default in re.findall(r'ABSL_FLAG\(\s*[\w:]+\s*,\s*(\w+)\s*,\s*("[^"]*"|[\w.]+)\s*,', code):
    entry = re.search(r"^\*--" + name + r"\*.*?(?=\n\n|\Z)", page, re.S | re.M)
    stated = entry and re.search(r"Default: *([^\s,;]+?)\.?(?:\s|$)", entry.group(0))
    if stated:
        want = default.strip('"')
        got = stated.group(1).strip("_*")
        if got != want:
            print(f"--{name}: page says default {got}, source says {want}")
PY
)
[ -z "$stale" ] || problem "locusd(8) defaults out of date: $stale"
commands=$("$locusctl" --help 2>&1 | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
[ -n "$commands" ] || problem "locusctl --help lists no commands"
for c in $commands; do
  grep -q "^\*${c}[* ]" "$src/deploy/man/locusctl.8.scd" || problem "locusctl(8) does not document '$c'"
done

if [ -n "$mandir" ]; then
  for page in locusd locusctl; do
    warnings=$(MANWIDTH=80 man --warnings -l "$mandir/man8/$page.8" 2>&1 >/dev/null)
    [ -z "$warnings" ] || problem "$page.8: $warnings"
    MANWIDTH=80 man -l "$mandir/man8/$page.8" 2>/dev/null | grep -q '^NAME' || problem "$page.8 does not render"
  done
else
  echo "note: man pages not built (scdoc missing)"
fi
[ $fail -eq 0 ] && echo "man pages: ok ($(wc -w <<<"$flags") locusd flags, $(wc -w <<<"$commands") locusctl commands)"
exit $fail
