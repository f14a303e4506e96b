#!/usr/bin/env bash
# Fails when a product file (agent/, policy/, common/, bpf/; tests and fakes
# aside) is over 400 lines or one of its functions is over 60: a room doing
# several jobs. Functions are measured by clang-tidy's readability-function-size
# over the compile commands of a configured build directory.
# Usage: tests/check_shape.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: tests/check_shape.sh BUILD_DIR}
max_file=400
max_function=60

mapfile -t files < <(git ls-files 'agent/*' 'policy/*' 'common/*' 'bpf/*' |
  grep -E '\.(cc|h|c)$' | grep -vE '(_test|fake_)[^/]*$')
failed=0
for f in "${files[@]}"; do
  n=$(wc -l < "$f")
  if [ "$n" -gt "$max_file" ]; then
    echo "check_shape: $f has $n lines (at most $max_file)" >&2
    failed=1
  fi
done

# Only sources the build compiles have compile commands (the BPF programs are
# built by a custom command); headers are checked through them.
mapfile -t sources < <(printf '%s\n' "${files[@]}" | grep -E '\.cc$' |
  while read -r f; do grep -q "\"file\": \"$PWD/$f\"" "$build/compile_commands.json" && echo "$f"; done)
config="{CheckOptions: [{key: readability-function-size.LineThreshold, value: $max_function}]}"
filter="^$PWD/(agent|policy|common)/"

# Parsing a file takes clang-tidy seconds (gRPC's and protobuf's headers):
# each file's findings are kept under $cache, keyed by clang-tidy's version,
# the settings, and the bytes of the file and of every project header it
# includes (from a Ninja tree's deps log; without one nothing is kept), so
# only files whose text or headers changed are parsed again.
cache=${LOCUS_SHAPE_CACHE:-${XDG_CACHE_HOME:-${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}/.cache}/locus/check_shape}
mkdir -p "$cache"
# Nothing of the checkout's own path goes into the key: a clone elsewhere
# (CI's) hits what an earlier one kept.
salt="$(clang-tidy --version | tr -s ' \n' ' ')$config${filter#^"$PWD"}"
mapfile -t keyed < <(python3 - "$build" "$salt" "${sources[@]}" <<'PY'
import hashlib, os, subprocess, sys
build, salt, *sources = sys.argv[1:]
root = os.getcwd()
log = subprocess.run(["ninja", "-C", build, "-t", "deps"], capture_output=True,
                     text=True).stdout if os.path.exists(
                         os.path.join(build, ".ninja_deps")) else ""
deps, source = {}, None
for line in log.splitlines():
    if not line.startswith(" "):  # "OBJECT: #deps N, ..." starts a block
        source = None
        continue
    path = line.strip()
    if not os.path.isabs(path):
        path = os.path.join(build, path)
    path = os.path.relpath(os.path.normpath(path), root)
    if source is None:  # the first dependency is the source itself
        source = path
        deps.setdefault(source, set())
    elif path.split(os.sep)[0] in ("agent", "policy", "common"):
        deps[source].add(path)
for src in sources:
    if src not in deps:
        print("-", src)  # no deps log: parse it, keep nothing
        continue
    h = hashlib.sha256(salt.encode())
    for f in [src] + sorted(deps[src]):
        h.update(f.encode() + b"\0")
        with open(f, "rb") as text:
            h.update(hashlib.sha256(text.read()).digest())
    print(h.hexdigest(), src)
PY
)

# shape_of KEY FILE: FILE's findings, one "path:line:col: function 'f', N
# lines" each (paths from the source root), kept under KEY when there is one.
shape_of() {
  set -o pipefail
  local key=$1 f=$2 out
  if [ "$key" != - ] && [ -f "$cache/$key" ]; then
    cat "$cache/$key"
    return 0
  fi
  out=$(clang-tidy -p "$build" --quiet --checks='-*,readability-function-size' \
    --config="$config" --header-filter="$filter" "$f" 2>/dev/null |
    awk '/warning: function .* exceeds/ { w = $0; next }
         w != "" && /note: [0-9]+ lines including/ {
           split(w, a, ": warning: "); sub(/ exceeds.*/, "", a[2])
           match($0, /[0-9]+ lines/)
           print a[1] ": " a[2] ", " substr($0, RSTART, RLENGTH); w = "" }' |
    sed "s#^$PWD/##") || return 1
  if [ "$key" != - ]; then
    printf '%s' "${out:+$out$'\n'}" >"$cache/$key.$$" && mv "$cache/$key.$$" "$cache/$key"
  fi
  [ -z "$out" ] || echo "$out"
}
export -f shape_of
export build config filter cache PWD
report=$(printf '%s\n' "${keyed[@]}" |
  xargs -P "$(nproc)" -L 1 bash -c 'shape_of "$0" "$1"' | sort -u || true)
if [ -n "$report" ]; then
  echo "$report" | sed "s#^#check_shape: #" >&2
  echo "check_shape: functions over $max_function lines (split them into named steps)" >&2
  failed=1
fi
exit $failed
