#!/bin/bash
# The long fuzz run: every target (or those named) for SECONDS each, PARALLEL
# at a time, from the committed seeds plus the corpus earlier runs in this
# build tree grew. Prints one line per target: executions, time, coverage,
# and the crash file when there is one. Exit status 1 when any target failed.
#
#   tests/fuzz/long_run.sh [-d BUILD_DIR] [-t SECONDS] [-j PARALLEL] [TARGET...]
#
# BUILD_DIR (default build-asan) is configured with
#   CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DLOCUS_FUZZ=ON
# and the fuzzers built (cmake --build build-asan --target fuzz_<name>...).
# Defaults: 600 s each, one at a time. Logs: BUILD_DIR/tests/fuzz/work/<name>/long.log.
set -uo pipefail
cd "$(dirname "$0")/../.."

build=build-asan
seconds=600
parallel=1
while getopts "d:t:j:" opt; do
  case "$opt" in
    d) build=$OPTARG ;;
    t) seconds=$OPTARG ;;
    j) parallel=$OPTARG ;;
    *) sed -n '2,12p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(ls tests/fuzz/corpus)

run_one() {
  local name=$1 work=$build/tests/fuzz/work/$1 binary=$build/tests/fuzz/fuzz_$1
  mkdir -p "$work/corpus" "$work/artifacts"
  "$binary" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
    "$work/corpus" "tests/fuzz/corpus/$name" > "$work/long.log" 2>&1
  local rc=$?
  local runs secs cov crash
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/long.log")
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$work/long.log")
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$work/long.log" | tail -n 1)
  crash=$(sed -n 's/.*Test unit written to \(.*\)/\1/p' "$work/long.log" | tail -n 1)
  printf '%-14s rc=%d executions=%s seconds=%s %s %s\n' "$name" "$rc" \
    "${runs:-?}" "${secs:-?}" "$cov" "${crash:+crash=$crash}"
  return $rc
}

failed=0
running=0
for name in "${targets[@]}"; do
  run_one "$name" &
  running=$((running + 1))
  if [ "$running" -ge "$parallel" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done
exit $failed
