#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test label. Run as root:
# the privileged tests load BPF programs and change thread/IRQ affinity.
set -euo pipefail
cd "$(dirname "$0")/.."

./deploy/deps.sh
./tests/check_format.sh

build=${LOCUS_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j"$(nproc)"

# fault: root, real kernel, one test at a time (~2 min on 2 CPUs).
labels=(unit privileged fault)
failed=0
for label in "${labels[@]}"; do
  echo "=== ctest -L ${label}"
  jobs=1
  [ "$label" = unit ] && jobs=$(nproc)
  ctest --test-dir "$build" -L "^${label}\$" -j"$jobs" --output-on-failure --no-tests=ignore || failed=1
done

# A test with no known label would never run: refuse it.
pattern=$(IFS='|'; echo "^(${labels[*]})\$")
unlabeled=$(ctest --test-dir "$build" -N -LE "$pattern" | sed -n 's/^Total Tests: //p')
if [ "${unlabeled:-0}" -ne 0 ]; then
  echo "run.sh: ${unlabeled} test(s) carry no label in (${labels[*]})" >&2
  failed=1
fi
exit $failed
