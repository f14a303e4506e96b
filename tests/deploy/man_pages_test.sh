#!/usr/bin/env bash
# The man pages document what the binaries accept: every flag defined in
# agent/main/ is in locusd(8), every command of `locusctl --help` is in
# locusctl(8), every key of the default policy (deploy/policy/nginx.yaml) is
# in locus-policy(5) with that default; and the built pages format without
# groff warnings.
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
keys=0
if [ -f "$src/deploy/policy/nginx.yaml" ]; then
  # Each key as section.key (section.map.key when nested) with the value
  # written in the default policy; the page's entry for it is
  # "*section.key*: TYPE" and says "Default: VALUE."
  undocumented=$(/usr/bin/python3 - "$src" <<'PY'
import re, sys
src = sys.argv[1]
page = open(src + "/deploy/man/locus-policy.5.scd").read().replace("\\_", "_")
stack = []  # the maps the line is in: (indent, key)
for line in open(src + "/deploy/policy/nginx.yaml"):
    m = re.match(r"^( *)([a-z_]+):(?: (.+))?$", line.rstrip())
    if not m:
        continue
    indent, key, value = m.groups()
    while stack and stack[-1][0] >= len(indent):
        stack.pop()
    if value is None:
        stack.append((len(indent), key))
        continue
    name = ".".join([k for _, k in stack] + [key])
    entry = re.search(r"^\*" + re.escape(name) + r"\*:.*?(?=\n\n|\Z)", page, re.S | re.M)
    if not entry:
        print(f"{name} is not documented")
        continue
    stated = re.search(r"Default:\s+(\S+?)\.?(?:\s|$)", entry.group(0))
    if not stated or stated.group(1) != value:
        print(f"{name}: page says default {stated and stated.group(1)}, the policy says {value}")
PY
  )
  [ -z "$undocumented" ] || problem "locus-policy(5): $undocumented"
  keys=$(grep -cE '^ *[a-z_]+: ' "$src/deploy/policy/nginx.yaml")
fi

if [ -n "$mandir" ]; then
  for page in man8/locusd.8 man8/locusctl.8 man5/locus-policy.5; do
    warnings=$(MANWIDTH=80 man --warnings -l "$mandir/$page" 2>&1 >/dev/null)
    [ -z "$warnings" ] || problem "$page: $warnings"
    MANWIDTH=80 man -l "$mandir/$page" 2>/dev/null | grep -q '^NAME' || problem "$page does not render"
  done
else
  echo "note: man pages not built (scdoc missing)"
fi
[ $fail -eq 0 ] && echo "man pages: ok ($(wc -w <<<"$flags") locusd flags, $(wc -w <<<"$commands") locusctl commands, $keys policy keys)"
exit $fail
