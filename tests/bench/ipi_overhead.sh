#!/usr/bin/env bash
# Broadcast interrupts the agent causes (not a ctest). Run as root after
# building locusd:
#   tests/bench/ipi_overhead.sh [BUILD_DIR]
#
# Function-call IPIs (the `CAL` row of /proc/interrupts: text patching when
# a tracepoint's first BPF program attaches or its last detaches, TLB and
# other cross-CPU calls) per CPU per second, with locusd off (idle) and on
# (dry run, private socket and journal, the built-in policy), alternating
# for ROUNDS rounds of SECONDS each; rounds rotate which comes first. The
# on-phase starts once locusd has loaded (its CPU time stops growing) and
# ends before it stops, so loading and unloading the programs, which patch
# text once, are not counted. Target: agent - idle <= 5 per CPU per second.
#
# Env: ROUNDS (default 10), SECONDS_PER_RUN (default 10),
#      LOCUSD_FLAGS (extra locusd flags, e.g. --softirq_window=0).
set -euo pipefail
build=${1:-${LOCUS_BUILD_DIR:-build}}
rounds=${ROUNDS:-10}
secs=${SECONDS_PER_RUN:-10}
locusd=$build/agent/main/locusd
[ -x "$locusd" ] || { echo "missing $locusd: build locusd first" >&2; exit 1; }
grep -q '^ *CAL:' /proc/interrupts ||
  { echo "no CAL row in /proc/interrupts on this kernel" >&2; exit 1; }

work=$(mktemp -d /tmp/locus-ipi.XXXXXX)
agent=
cleanup() {
  if [ -n "$agent" ]; then kill "$agent" 2>/dev/null || true; wait "$agent" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

ncpus=$(awk '/^ *CAL:/ { n = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n++; print n }' /proc/interrupts)
cal_total() {  # sum of the CAL row over all CPUs
  awk '/^ *CAL:/ { s = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i; print s }' /proc/interrupts
}
now_ns() { date +%s%N; }

# One measured phase: prints CAL per CPU per second over $secs.
measure() {
  local c0 c1 t0 t1
  c0=$(cal_total); t0=$(now_ns)
  sleep "$secs"
  c1=$(cal_total); t1=$(now_ns)
  awk -v c="$((c1 - c0))" -v t="$((t1 - t0))" -v n="$ncpus" \
    'BEGIN { printf "%.2f", c / n / (t / 1e9) }'
}

start_agent() {
  # shellcheck disable=SC2086 # LOCUSD_FLAGS is a list of flags
  "$locusd" --policy="$work/absent.yaml" --mode=dry_run \
    --socket="$work/locusd.sock" --journal="$work/journal" \
    ${LOCUSD_FLAGS:-} 2>"$work/locusd.log" &
  agent=$!
  # Loaded once its CPU time stops growing and the socket is up.
  local last=-1 now
  for _ in $(seq 100); do
    sleep 0.3
    now=$(awk '{ print $14 + $15 }' "/proc/$agent/stat" 2>/dev/null) || break
    if [ "$now" = "$last" ] && [ -S "$work/locusd.sock" ]; then return 0; fi
    last=$now
  done
  echo "locusd did not start:" >&2; cat "$work/locusd.log" >&2; exit 1
}
stop_agent() {
  kill "$agent"; wait "$agent" 2>/dev/null || true; agent=
  sleep 1  # the detach's own IPIs land outside the next phase
}

echo "== CAL (function-call IPIs) per CPU per second, $ncpus CPUs, $rounds rounds of ${secs}s, idle vs locusd ${LOCUSD_FLAGS:-}"
idle=() on=()
for r in $(seq "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then
    i=$(measure); start_agent; a=$(measure); stop_agent
  else
    start_agent; a=$(measure); stop_agent; i=$(measure)
  fi
  idle+=("$i"); on+=("$a")
  echo "  round $r: idle $i  agent $a"
done
python3 - "${idle[*]}" "${on[*]}" <<'PY'
import statistics, sys
idle, on = ([float(x) for x in a.split()] for a in sys.argv[1:3])
added = [a - i for i, a in zip(idle, on)]
mi, ma, md = statistics.median(idle), statistics.median(on), statistics.median(added)
print(f"idle   median {mi:6.2f}  ({min(idle):.2f}..{max(idle):.2f})")
print(f"agent  median {ma:6.2f}  ({min(on):.2f}..{max(on):.2f})")
print(f"added  median {md:6.2f}  ({min(added):.2f}..{max(added):.2f}) per CPU per second,"
      f" agent/idle = {ma / mi if mi else float('inf'):.2f}")
print(f"target: added <= 5 per CPU per second: {'met' if md <= 5 else 'MISSED'}")
PY
