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
report=$(printf '%s\n' "${sources[@]}" |
  xargs -P "$(nproc)" -n 8 clang-tidy -p "$build" --quiet \
    --checks='-*,readability-function-size' --config="$config" \
    --header-filter="^$PWD/(agent|policy|common)/" 2>/dev/null |
  awk '/warning: function .* exceeds/ { w = $0; next }
       w != "" && /note: [0-9]+ lines including/ {
         split(w, a, ": warning: "); sub(/ exceeds.*/, "", a[2])
         match($0, /[0-9]+ lines/)
         print a[1] ": " a[2] ", " substr($0, RSTART, RLENGTH); w = "" }' |
  sort -u || true)
if [ -n "$report" ]; then
  echo "$report" | sed "s#^$PWD/##; s#^#check_shape: #" >&2
  echo "check_shape: functions over $max_function lines (split them into named steps)" >&2
  failed=1
fi
exit $failed
