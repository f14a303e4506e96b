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
  lab_finish
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
# the lab first: it is the longest and runs beside everything after it (see
# lab_start). fuzz: only in the sanitizer tree.
labels=(lab unit privileged fault fuzz)
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

# run_label DIR LABEL [CTEST_ARG...]: ctest for one label of DIR, its output
# also in DIR/Testing/run-LABEL.log (run-$stream.log for a lab stream);
# records its time, and what failed.
run_label() {
  local dir=$1 label=$2 jobs=1 repeat=() log="$1/Testing/run-${stream:-$2}.log"
  shift 2
  echo "=== ${dir}: ctest -L ${label}${*:+ $*}"
  # Unit tests are independent; each fuzz target is one single-threaded process.
  case "$label" in unit | fuzz) jobs=$(spare_cpus) ;; esac
  # A lab guest is emulated (TCG) on a shared machine: a scenario that
  # misses a tick-count or share bound once runs again in a fresh guest,
  # and passes only if that run meets every bound (the first run's output
  # stays in the log above it).
  [ "$label" = lab ] && repeat=(--repeat until-pass:2)
  mkdir -p "$dir/Testing"
  if ! timed "${dir}: ctest -L ${label}${stream:+ ($stream)}" ctest_to "$log" --test-dir "$dir" \
    -L "^${label}\$" "$@" -j"$jobs" "${repeat[@]}" --output-on-failure --no-tests=ignore; then
    failed=1
    # From this run's own output: the lab's ctest runs beside another in the
    # same tree, and both would write Testing/Temporary/LastTestsFailed.log.
    # Skipped tests are listed the same way, under "did not run": not failures.
    summary+=("${dir} ${label}: $(sed -nE '/\((Skipped|Disabled)\)$/d; s/^\s*[0-9]+ - (.*) \([^)]*\)$/\1/p' "$log" | paste -sd' ')")
  fi
  [ "$label" = lab ] && mapfile -t -O "${#timings[@]}" timings < <(lab_lines "$log")
  return 0
}

# The lab's guests run on one host thread each (single-threaded TCG), so on
# a machine of two CPUs or more the lab runs beside what follows it (the
# rest of the build, the shape check and the sanitizer tree, whose tests
# then take one CPU fewer) instead of before it: lab_start DIR starts a
# first stream once the lab's binaries are built;
# lab_finish, called once every other label is done and a CPU is free again,
# starts a second beside it, then waits for both and shows their output,
# times and failures. The streams take the lab's tests from one queue, so
# the second takes what the first has not reached: the longest first
# ($lab_first, then ctest's order), except the experiment's ($lab_last),
# taken last, when the sanitizer tree is done or nearly: its check that the
# workers shared the requests fairly (within 10 %) failed twice running
# beside that tree's compile here (skews of 0.13 and 0.10), as it never
# had after it.
lab_first=(lab_lifecycle_ lab_no_fighting_)
lab_last=(lab_experiment_)
lab_pids=()
lab_streams=()
# lab_queue DIR: the lab's tests of DIR, one per line, in the order above.
lab_queue() {
  local all rest prefix
  all=$(ctest --test-dir "$1" -N -L '^lab$' | sed -nE 's/^ *Test +#[0-9]+: (.*)$/\1/p')
  rest=$all
  for prefix in "${lab_first[@]}" "${lab_last[@]}"; do
    rest=$(grep -v "^${prefix}" <<<"$rest" || true)
  done
  {
    for prefix in "${lab_first[@]}"; do grep "^${prefix}" <<<"$all" || true; done
    echo "$rest"
    for prefix in "${lab_last[@]}"; do grep "^${prefix}" <<<"$all" || true; done
  } | grep . || true
}
# lab_next: the queue's next test, taken off it; fails when it is empty.
lab_next() {
  local queue=$lab_dir/Testing/lab-queue next
  next=$(flock "$queue.lock" sh -c 'head -n1 "$1" && sed -i 1d "$1"' - "$queue")
  [ -n "$next" ] && echo "$next"
}
lab_stream() { # NAME
  local stream=$1
  (
    timings=() summary=() failed=0
    start=$(date +%s)
    while name=$(lab_next); do
      run_label "$lab_dir" lab -R "^${name}\$" >>"$lab_dir/Testing/run-$stream.out" 2>&1
    done
    # One line for the stream; the per-test lines after it.
    printf '%s\n' "$failed" >"$lab_dir/Testing/run-$stream.failed"
    {
      printf '%-44s %6d s\n' "${lab_dir}: lab (${stream})" $(($(date +%s) - start))
      printf '%s\n' "${timings[@]}" | grep -v "^${lab_dir}: ctest -L lab"
    } >"$lab_dir/Testing/run-$stream.timings"
    printf '%s\n' "${summary[@]}" >"$lab_dir/Testing/run-$stream.summary"
  ) &
  lab_pids+=($!)
  lab_streams+=("$stream")
}
lab_start() {
  lab_dir=$1
  mkdir -p "$lab_dir/Testing"
  lab_queue "$lab_dir" >"$lab_dir/Testing/lab-queue"
  : >"$lab_dir/Testing/run-lab-1.out"
  : >"$lab_dir/Testing/run-lab-2.out"
  lab_stream lab-1
}
# lab_finish [late]: with "late" (the run's own path, not a failure's exit)
# starts the second stream first.
lab_finish() {
  [ "${#lab_pids[@]}" -gt 0 ] || return 0
  [ "${1:-}" = late ] && lab_stream lab-2
  wait "${lab_pids[@]}" || true
  lab_pids=()
  local stream out
  for stream in "${lab_streams[@]}"; do
    out=$lab_dir/Testing/run-$stream
    cat "$out.out"
    mapfile -t -O "${#timings[@]}" timings < <(grep . "$out.timings")
    mapfile -t -O "${#summary[@]}" summary < <(grep . "$out.summary")
    [ "$(cat "$out.failed")" = 0 ] || failed=1
  done
  lab_streams=()
}
# The CPUs left to builds and tests while the lab runs beside them.
spare_cpus() {
  local n
  n=$(nproc)
  [ "${#lab_pids[@]}" -gt 0 ] && [ "$n" -gt 1 ] && n=$((n - 1))
  echo "$n"
}

# build_and_test DIR GENERATOR [CMAKE_ARG...]: configures and builds DIR, runs
# each label of $run_labels there (the lab beside what follows, see
# lab_start), and refuses tests that carry no label of $labels (they would
# never run). The two trees use the two generators people build with (Ninja,
# and Unix Makefiles as Debian's packaging does), so a rule that works under
# one only fails here. A tree configured before keeps its own.
build_and_test() {
  local dir=$1 generator=$2 label pattern unlabeled
  shift 2
  [ -f "$dir/CMakeCache.txt" ] && generator=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$dir/CMakeCache.txt")
  command -v ccache >/dev/null && ccache -z >/dev/null
  timed "${dir}: configure" cmake -S . -B "$dir" -G "$generator" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" ||
    { summary+=("${dir}: configure"); exit 1; }
  # The lab's binaries first, and the lab started beside the rest of the
  # build: the guests wait for the agent, not for the tests.
  if [[ " ${run_labels[*]} " == *" lab "* ]] && [ "$(nproc)" -gt 1 ]; then
    timed "${dir}: build (lab_binaries)" cmake --build "$dir" -j"$(nproc)" --target lab_binaries ||
      { summary+=("${dir}: build"); exit 1; }
    lab_start "$dir"
  fi
  # Every CPU even beside the lab: a build from a cold cache is the longest
  # step there is, and the guests' scenarios count ticks, not seconds.
  timed "${dir}: build" cmake --build "$dir" -j"$(nproc)" || { summary+=("${dir}: build"); exit 1; }
  timings+=("$(ccache_line "$dir")")
  for label in "${run_labels[@]}"; do
    if [ "$label" = lab ] && [ "$(nproc)" -gt 1 ]; then
      continue # started above
    elif [ "$label" = privileged ] && [ -n "${privileged_only:-}" ]; then
      run_label "$dir" "$label" -R "$privileged_only"
    else
      run_label "$dir" "$label"
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

# The unit and privileged tests of Locus's own code are built and run once,
# under the sanitizers (below); this tree builds the fault tests (the
# GoogleTest labels it registers: LOCUS_TEST_LABELS), runs those, the
# package's and the README's (deploy.*: its binaries are what ships), and
# the lab runs its binaries on real kernels.
run_labels=("${labels[@]}")
privileged_only='^deploy\.' build_and_test "$build" Ninja -DLOCUS_TEST_LABELS=fault
timed "check_shape (tests/check_shape.sh)" ./tests/check_shape.sh ||
  { failed=1; summary+=("check_shape"); }

# Unit and privileged under ASan+UBSan (any report fails the test), and
# the fuzz targets: clang, because libFuzzer comes with it.
run_labels=(unit privileged fuzz)
CC=clang CXX=clang++ UBSAN_OPTIONS=print_stacktrace=1 \
  build_and_test "${build}-asan" "Unix Makefiles" -DLOCUS_FUZZ=ON "-DLOCUS_TEST_LABELS=unit;privileged"
lab_finish late

exit $failed
