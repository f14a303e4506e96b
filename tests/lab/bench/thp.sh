#!/bin/bash
# The lab's transparent-huge-page benchmark (a script, not a ctest): Locus
# moving a worker whose memory is in huge pages, once with THP "madvise" and
# once "always", in the same guest shape as the convergence benchmark
# (2 nodes x 2 CPUs, 2 GiB, TCG). Run as root after building locusd,
# locusctl, lab_memhog, lab_sampler and locus_bench_empty:
#
#   tests/lab/bench/thp.sh [BUILD_DIR] [OUT_DIR]    (build, BUILD_DIR/lab-thp)
#
# In each guest: THP set to the mode, numa_balancing=0, the sensors'
# tracepoints held (tp_hold.sh); then locusd (enforce, the memhog
# policy with budget_mb_per_s BENCH_BUDGET, 200) and `lab_memhog --thp
# --mb=BENCH_MB (600)` first-touched on node 1, running on node 0, watched by
# lab_sampler every 200 ms for BENCH_SECONDS (30). (The move of huge-page
# units between two nodes is tested by the lab label: lab_privileged.)
# Figures, from the kernel:
#   huge before/after  AnonHugePages of the memhog (smaps_rollup), MiB, at
#                      "ready" and at the end
#   moved              MiB migrated in the run (pgmigrate_success counts a
#                      huge page as its 512 base pages), and huge pages
#                      migrated whole (thp_migration_success)
#   t95                seconds from ready to >= 95 % of its pages on node 0
#   MiB/s mean         moved / (last sample that moved - first one)
#   MiB/s steady       the same from 1 s after the first move (the token
#                      bucket starts full: one second's budget as a burst)
#   peak 1s            most moved in any 1 s of samples
#   ratio              steady / budget (target: 0.9 to 1.1)
# Output in OUT_DIR: MODE.csv (lab_sampler's columns), MODE.locusd.log,
# MODE.figures (one line), table.txt (printed too).
#
# Env: BENCH_MODES ("madvise always"), BENCH_KERNEL (6.1), BENCH_BUDGET,
# BENCH_MB, BENCH_SECONDS, BENCH_TICK (locusd --tick, 250ms).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)

# --- inside the guest: thp.sh --case MODE BUILD_DIR OUT_PREFIX ------------
run_case() {
  local mode=$1 build=$2 out=$3
  local budget=${BENCH_BUDGET:-200} mb=${BENCH_MB:-600} seconds=${BENCH_SECONDS:-30}
  local socket=/run/locus/thp.sock line huge_kib=0 pid
  # Global: the EXIT trap runs after this function has returned.
  work=$(mktemp -d /tmp/thp.XXXXXX)
  die() { echo "thp.sh [$mode]: $*" >&2; exit 1; }
  # shellcheck source=tests/lab/tp_hold.sh
  . "$here/../tp_hold.sh"
  trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
  echo "$mode" >/sys/kernel/mm/transparent_hugepage/enabled || die "cannot set THP $mode"
  echo 0 >/proc/sys/kernel/numa_balancing || die "cannot set numa_balancing"
  tracepoints_hold "$build/tests/bench/locus_bench_empty" "$work" || die "tracepoints not held"

  local node1_cpus
  node1_cpus=$(cat /sys/devices/system/node/node1/cpulist) || die "needs 2 nodes"
  sed -e "s/@NODE1_CPUS@/$node1_cpus/" -e "s/budget_mb_per_s: .*/budget_mb_per_s: $budget/" \
    "$here/policy_memhog.yaml" >"$work/policy.yaml"
  "$build/agent/main/locusd" --policy="$work/policy.yaml" --socket="$socket" \
    --journal="$work/journal" --mode=enforce --tick="${BENCH_TICK:-250ms}" >"$out.locusd.log" 2>&1 &
  local deadline=$((SECONDS + 90))
  until "$build/agent/ctl/locusctl" --socket="$socket" status >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "locusd did not answer: $(tail -n 3 "$out.locusd.log")"
    sleep 0.2
  done

  # Started under another name, confined to node 1 (as case.sh does).
  ln -s "$build/tests/bench/lab_memhog" "$work/lab_memhog_prep"
  coproc MEMHOG { exec taskset -c "$node1_cpus" "$work/lab_memhog_prep" --mb="$mb" \
    --touch_node=1 --run_node=0 --report_ms=0 --thp; }
  pid=$MEMHOG_PID
  mkfifo "$work/start"
  "$build/tests/bench/lab_sampler" --pids="$pid" --period_ms=200 --seconds="$seconds" \
    --start_on_stdin <"$work/start" >"$out.csv" &
  local sampler=$!
  exec {start}>"$work/start"
  read -r -t 600 line <&"${MEMHOG[0]}"
  [ "$line" = ready ] || die "lab_memhog did not report ready"
  read -r -t 60 line <&"${MEMHOG[0]}"
  [[ $line == "anon_huge_kib "* ]] && huge_kib=${line#anon_huge_kib }
  local thp0
  thp0=$(vmstat_field thp_migration_success)
  echo go >&"$start"
  wait "$sampler" || die "lab_sampler failed"
  local huge_after thp1
  huge_after=$(awk '/^AnonHugePages:/ { print $2 }' "/proc/$pid/smaps_rollup")
  thp1=$(vmstat_field thp_migration_success)
  echo "$mode $budget $((huge_kib / 1024)) $((huge_after / 1024)) $((thp1 - thp0))" >"$out.figures"
}

vmstat_field() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }

# --- on the host: one guest per mode, then the table ----------------------
summarize() {
  local out=$1 mode
  {
    printf '%-8s %6s %6s %6s %7s %5s %7s %6s %6s %6s %7s\n' THP budget "huge<" "huge>" \
      "MiB mvd" thps t95 mean steady "pk 1s" ratio
    for mode in ${BENCH_MODES:-madvise always}; do
      [ -s "$out/$mode.figures" ] || { echo "$mode: no figures"; continue; }
      read -r _ budget before after thps <"$out/$mode.figures"
      awk -F, -v mode="$mode" -v budget="$budget" -v before="$before" -v after="$after" \
        -v thps="$thps" '
        NR == 1 { next }
        { t[n] = $1; share[n] = $3 > 0 ? $2 / $3 : 0; mig[n] = $5 * 4 / 1024; n++ }
        END {
          t95 = "never"; first = -1; last = -1
          for (i = 0; i < n; i++) {
            if (t95 == "never" && share[i] >= 0.95) t95 = sprintf("%.1f", t[i])
            if (i > 0 && mig[i] > mig[i - 1]) { if (first < 0) first = i - 1; last = i }
          }
          mean = steady = peak = 0
          if (first >= 0 && t[last] > t[first]) mean = (mig[last] - mig[first]) / (t[last] - t[first])
          for (s = first; s >= 0 && s < n && t[s] < t[first] + 1; s++);
          if (first >= 0 && s < last && t[last] > t[s]) steady = (mig[last] - mig[s]) / (t[last] - t[s])
          for (i = 0; i < n; i++)
            for (j = i; j < n && t[j] <= t[i] + 1; j++)
              if (mig[j] - mig[i] > peak) peak = mig[j] - mig[i]
          printf("%-8s %6d %6d %6d %7.0f %5d %7s %6.0f %6.0f %6.0f %7.2f\n", mode, budget,
            before, after, n > 0 ? mig[n - 1] : 0, thps, t95, mean, steady, peak, steady / budget)
        }' "$out/$mode.csv"
    done
  } | tee "$out/table.txt"
}

if [ "${1:-}" = --case ]; then
  shift
  [ $# -eq 3 ] || { echo "usage: $0 --case MODE BUILD_DIR OUT_PREFIX" >&2; exit 2; }
  run_case "$@"
  exit 0
fi

build=$(realpath "${1:-${LOCUS_BUILD_DIR:-$repo/build}}")
out=${2:-$build/lab-thp}
for bin in agent/main/locusd agent/ctl/locusctl tests/bench/lab_memhog tests/bench/lab_sampler \
  tests/bench/locus_bench_empty; do
  [ -x "$build/$bin" ] || { echo "thp.sh: missing $build/$bin (build it first)" >&2; exit 1; }
done
mkdir -p "$out" && out=$(realpath "$out")
failed=0
for mode in ${BENCH_MODES:-madvise always}; do
  echo "=== THP $mode" >&2
  rm -f "$out/$mode".*
  if ! "$repo/tests/lab/guest.sh" --kernel "${BENCH_KERNEL:-6.1}" --nodes 2 --cpus-per-node 2 \
      --mem 2048 --timeout 600 --build "$build" --share "$out" \
      -- "$here/thp.sh" --case "$mode" "$build" "$out/$mode"; then
    echo "thp.sh: THP $mode failed" >&2
    failed=1
  fi
done
summarize "$out"
exit $failed
