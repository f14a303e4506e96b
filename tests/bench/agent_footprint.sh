#!/usr/bin/env bash
# locusd's memory and CPU with many target threads: a synthetic target with
# N threads (default 1000) selected by a policy, locusd in dry run at a 1 s
# tick; after a warm-up, RSS (VmRSS, VmHWM) and CPU time (utime + stime from
# /proc/PID/stat) over a measured window, printed against the targets
# (<= 32 MiB RSS, <= 0.5% of one core). Run as root after building:
#   tests/bench/agent_footprint.sh [BUILD_DIR] [THREADS] [SECONDS]
# Env: MODE, the policy's mode (default dry_run; enforce pins the synthetic
# threads: they are the benchmark's own).
#      LOCUSD_FLAGS, extra locusd flags; e.g. on a one-node machine
# --sysfs_root=tests/fixtures/split2/sys shows it two nodes, so the agent
# also reads what it skips on one (numa_maps, the migrate program).
set -euo pipefail
build=${1:-build}
threads=${2:-1000}
window=${3:-30}
locusd=$build/agent/main/locusd
synth=$build/tests/bench/locus_bench_threads
for bin in "$locusd" "$synth"; do
  [ -x "$bin" ] || { echo "missing $bin: build first" >&2; exit 1; }
done

dir=$(mktemp -d)
cleanup() {
  [ -n "${agent:-}" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
  [ -n "${target:-}" ] && kill "$target" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

cat >"$dir/policy.yaml" <<YAML
mode: ${MODE:-dry_run}
targets:
  comm: [locus-synth]
  workers_only: false
YAML

"$synth" locus-synth "$threads" >"$dir/synth.out" &
target=$!
until grep -q ready "$dir/synth.out" 2>/dev/null; do sleep 0.1; done

# shellcheck disable=SC2086 # LOCUSD_FLAGS is a list of flags
"$locusd" --policy="$dir/policy.yaml" --socket="$dir/locusd.sock" \
  --journal="$dir/journal" --tick=1s ${LOCUSD_FLAGS:-} 2>"$dir/locusd.log" &
agent=$!
sleep 10  # warm-up: sensors loaded, a few ticks, maps populated

hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$agent/stat"; }
seen=$("$build/agent/ctl/locusctl" --socket="$dir/locusd.sock" status |
       sed -n 's/.*target process(es), \([0-9]*\) thread(s).*/\1/p')
start_cpu=$(cpu_ticks)
start_ns=$(date +%s%N)
sleep "$window"
end_cpu=$(cpu_ticks)
end_ns=$(date +%s%N)
rss_kb=$(awk '/^VmRSS/ { print $2 }' "/proc/$agent/status")
hwm_kb=$(awk '/^VmHWM/ { print $2 }' "/proc/$agent/status")
overruns=$("$build/agent/ctl/locusctl" --socket="$dir/locusd.sock" status |
           sed -n 's/.* \([0-9]*\) overruns.*/\1/p')

awk -v c0="$start_cpu" -v c1="$end_cpu" -v t0="$start_ns" -v t1="$end_ns" \
    -v hz="$hz" -v rss="$rss_kb" -v hwm="$hwm_kb" -v n="$threads" \
    -v seen="${seen:-?}" -v ov="${overruns:-?}" 'BEGIN {
  secs = (t1 - t0) / 1e9
  core = (c1 - c0) / hz / secs * 100
  printf "target threads: %d (locusd sees %s), window %.0f s, overruns %s\n", n, seen, secs, ov
  printf "locusd RSS      %6.1f MiB (peak %.1f MiB)   target <= 32 MiB   %s\n", rss / 1024, hwm / 1024, (rss / 1024 <= 32 ? "met" : "MISSED")
  printf "locusd CPU      %6.2f %% of one core        target <= 0.5 %%    %s\n", core, (core <= 0.5 ? "met" : "MISSED")
}'
