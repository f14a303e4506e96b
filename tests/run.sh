#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test label. Run as root:
# the privileged tests load BPF programs and change thread/IRQ affinity.
set -euo pipefail
cd "$(dirname "$0")/.."

./deploy/deps.sh test lab
./tests/check_format.sh

build=${LOCUS_BUILD_DIR:-build}
# fault and lab: root, one test at a time (fault ~2 min, lab: QEMU guests);
# fuzz: only in the sanitizer tree below.
labels=(unit privileged fault lab fuzz)
failed=0
# What failed, repeated at the end: a CI log may show only its last lines.
summary=()

# build_and_test DIR GENERATOR [CMAKE_ARG...]: configures and builds DIR, runs
# each label of $run_labels there, and refuses tests that carry no label of
# $labels (they would never run). The two trees use the two generators people
# build with (Ninja, and Unix Makefiles as Debian's packaging does), so a rule
# that works under one only fails here. A tree configured before keeps its own.
build_and_test() {
  local dir=$1 generator=$2 label jobs pattern unlabeled repeat
  shift 2
  [ -f "$dir/CMakeCache.txt" ] && generator=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$dir/CMakeCache.txt")
  cmake -S . -B "$dir" -G "$generator" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
  cmake --build "$dir" -j"$(nproc)"
  for label in "${run_labels[@]}"; do
    echo "=== ${dir}: ctest -L ${label}"
    jobs=1
    repeat=()
    # Unit tests are independent; each fuzz target is one single-threaded process.
    case "$label" in unit | fuzz) jobs=$(nproc) ;; esac
    # A lab guest is emulated (TCG) on a shared machine: a scenario that
    # misses a tick-count or share bound once runs again in a fresh guest,
    # and passes only if that run meets every bound (the first run's output
    # stays in the log above it).
    [ "$label" = lab ] && repeat=(--repeat until-pass:2)
    if ! ctest --test-dir "$dir" -L "^${label}\$" -j"$jobs" "${repeat[@]}" --output-on-failure --no-tests=ignore; then
      failed=1
      summary+=("${dir} ${label}: $(cut -d: -f2 "$dir/Testing/Temporary/LastTestsFailed.log" 2>/dev/null | paste -sd' ')")
    fi
  done
  pattern=$(IFS='|'; echo "^(${labels[*]})\$")
  unlabeled=$(ctest --test-dir "$dir" -N -LE "$pattern" | sed -n 's/^Total Tests: //p')
  if [ "${unlabeled:-0}" -ne 0 ]; then
    echo "run.sh: ${dir}: ${unlabeled} test(s) carry no label in (${labels[*]})" >&2
    failed=1
    summary+=("${dir}: ${unlabeled} unlabeled test(s)")
  fi
}

run_labels=("${labels[@]}")
build_and_test "$build" Ninja
./tests/check_shape.sh "$build" || { failed=1; summary+=("check_shape"); }

# Unit and privileged again under ASan+UBSan (any report fails the test), and
# the fuzz targets: clang, because libFuzzer comes with it.
run_labels=(unit privileged fuzz)
CC=clang CXX=clang++ UBSAN_OPTIONS=print_stacktrace=1 \
  build_and_test "${build}-asan" "Unix Makefiles" -DLOCUS_FUZZ=ON
if [ "$failed" -ne 0 ]; then
  echo "run.sh: FAILED:" >&2
  printf '  %s\n' "${summary[@]}" >&2
fi
exit $failed
