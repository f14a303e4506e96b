#!/usr/bin/env bash
# Fails when a tracked C/C++/proto file differs from clang-format's output.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.c' '*.proto')
[ ${#files[@]} -eq 0 ] && exit 0
if ! clang-format --dry-run --Werror "${files[@]}"; then
  echo "check_format: run clang-format -i on the files above" >&2
  exit 1
fi
