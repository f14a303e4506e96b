#!/usr/bin/env bash
# Fails when a product file (agent/, policy/, common/, bpf/; tests and fakes
# aside) is over 400 lines or one of its functions is over 60: a room doing
# several jobs. A function is measured as clang-tidy's
# readability-function-size measures it (from its body's opening brace to its
# closing one) by tests/function_sizes.py, which finds the functions with
# universal-ctags: no compile, so the whole tree takes seconds where parsing
# each file with gRPC's and protobuf's headers took minutes.
# Usage: tests/check_shape.sh
set -euo pipefail
cd "$(dirname "$0")/.."
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

report=$(python3 tests/function_sizes.py "$max_function" "${files[@]}") || {
  echo "check_shape: tests/function_sizes.py failed" >&2
  exit 1
}
if [ -n "$report" ]; then
  echo "$report" | sed "s#^#check_shape: #" >&2
  echo "check_shape: functions over $max_function lines (split them into named steps)" >&2
  failed=1
fi
exit $failed
