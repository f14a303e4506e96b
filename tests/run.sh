#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test label. Run as root:
# the privileged tests load BPF programs and change thread/IRQ affinity.
# Ends with a timing table: each phase's seconds, and each lab test's.
set -euo pipefail
cd "$(dirname "$0")/.."

# timed NAME COMMAND...: runs COMMAND and keeps its seconds and status for
# the table printed at the end (a CI log shows its tail; a phase that grew
# is seen there).
timings=()
summary=()
timed() {
  local name=$1 start rc=0
  shift
  start=$(date +%s)
  "$@" || rc=$?
  timings+=("$(printf '%-44s %6d s%s' "$name" $(($(date +%s) - start)) \
    "$([ $rc -eq 0 ] || echo "  (exit $rc)")")")
  return $rc
}
run_start=$(date +%s)
# The table, then what failed, are printed on any exit (a failed build's
# too): a CI log may show only its last lines.
finish() {
  echo "=== run.sh: timings"
  printf '%s\n' "${timings[@]}"
  printf '%-44s %6d s\n' "total" $(($(date +%s) - run_start))
  if [ "${#summary[@]}" -ne 0 ]; then
    echo "run.sh: FAILED:" >&2
    printf '  %s\n' "${summary[@]}" >&2
  fi
}
trap finish EXIT

timed "deps (deploy/deps.sh test lab)" ./deploy/deps.sh test lab
timed "format (tests/check_format.sh)" ./tests/check_format.sh

build=${LOCUS_BUILD_DIR:-build}
# fault and lab: root, one test at a time (fault ~2 min, lab: QEMU guests);
# fuzz: only in the sanitizer tree below.
labels=(unit privileged fault lab fuzz)
failed=0

# ccache_line DIR: the compiler cache's hits and misses since the last zero,
# for the table (ccache's counters are machine-wide; the trees build one
# after the other).
ccache_line() {
  command -v ccache >/dev/null || return 0
  ccache --print-stats 2>/dev/null | awk -v dir="$1" '
    /^direct_cache_hit|^preprocessed_cache_hit/ { hit += $2 }
    /^cache_miss/ { miss += $2 }
    END { printf "%-44s %6d hits, %d misses\n", "ccache (" dir ")", hit, miss }'
  ccache -z >/dev/null
}

# ctest_to LOG CTEST_ARG...: ctest, its output kept in LOG too (pipefail:
# ctest's status).
ctest_to() {
  local log=$1
  shift
  ctest "$@" 2>&1 | tee "$log"
}

# lab_lines LOG: each lab test's seconds from ctest's output (a retried test
# shows each try).
lab_lines() {
  sed -nE 's/^ *([0-9]+\/[0-9]+ )?Test +#[0-9]+: (lab_[^ ]+) \.+ *(\*+)?([A-Za-z]+)[^0-9]*([0-9.]+) sec.*$/\2 \5 \4/p' "$1" |
    while read -r name secs result; do
      printf '%-44s %6.0f s  %s\n' "  $name" "$secs" "$result"
    done
}

# build_and_test DIR GENERATOR [CMAKE_ARG...]: configures and builds DIR, runs
# each label of $run_labels there, and refuses tests that carry no label of
# $labels (they would never run). The two trees use the two generators people
# build with (Ninja, and Unix Makefiles as Debian's packaging does), so a rule
# that works under one only fails here. A tree configured before keeps its own.
build_and_test() {
  local dir=$1 generator=$2 label jobs pattern unlabeled repeat log
  shift 2
  [ -f "$dir/CMakeCache.txt" ] && generator=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$dir/CMakeCache.txt")
  command -v ccache >/dev/null && ccache -z >/dev/null
  timed "${dir}: configure" cmake -S . -B "$dir" -G "$generator" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" ||
    { summary+=("${dir}: configure"); exit 1; }
  timed "${dir}: build" cmake --build "$dir" -j"$(nproc)" || { summary+=("${dir}: build"); exit 1; }
  timings+=("$(ccache_line "$dir")")
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
    log="$dir/Testing/run-${label}.log"
    mkdir -p "$dir/Testing"
    if ! timed "${dir}: ctest -L ${label}" ctest_to "$log" --test-dir "$dir" \
      -L "^${label}\$" -j"$jobs" "${repeat[@]}" --output-on-failure --no-tests=ignore; then
      failed=1
      summary+=("${dir} ${label}: $(cut -d: -f2 "$dir/Testing/Temporary/LastTestsFailed.log" 2>/dev/null | paste -sd' ')")
    fi
    [ "$label" = lab ] && mapfile -t -O "${#timings[@]}" timings < <(lab_lines "$log")
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
timed "check_shape (tests/check_shape.sh)" ./tests/check_shape.sh "$build" ||
  { failed=1; summary+=("check_shape"); }

# Unit and privileged again under ASan+UBSan (any report fails the test), and
# the fuzz targets: clang, because libFuzzer comes with it.
run_labels=(unit privileged fuzz)
CC=clang CXX=clang++ UBSAN_OPTIONS=print_stacktrace=1 \
  build_and_test "${build}-asan" "Unix Makefiles" -DLOCUS_FUZZ=ON

exit $failed
