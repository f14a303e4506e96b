#!/usr/bin/env bash
# What a running experiment adds to locusd's CPU time: nginx with WORKERS
# reuseport workers on loopback under a steady wrk load, locusd in enforce
# mode with nginx as its targets, and windows of SECONDS alternating without
# and with an experiment (`locusctl experiment start`, stopped after its
# window), ROUNDS of each. Per window: the control loop's CPU per tick (mean
# tick_cpu_ns of `locusctl watch --json`) and the whole process's CPU
# (utime + stime of /proc/PID/stat, every thread); then the means of each
# arm side by side and their ratio. Run as root after building:
#   tests/bench/experiment_cost.sh [BUILD_DIR] [WORKERS] [SECONDS] [ROUNDS]
#                                  (build, 4, 40, 3)
set -euo pipefail
# shellcheck source=tests/bench/nginx_loopback.sh
. "$(dirname "$0")/nginx_loopback.sh"
build=$(cd "${1:-build}" && pwd)
workers=${2:-4}
window=${3:-40}
rounds=${4:-3}
locusd=$build/agent/main/locusd
ctl=$build/agent/ctl/locusctl
for bin in "$locusd" "$ctl" nginx wrk; do
  command -v "$bin" >/dev/null || { echo "missing $bin" >&2; exit 1; }
done

dir=$(mktemp -d)
cleanup() {
  [ -n "${load:-}" ] && kill "$load" 2>/dev/null
  [ -n "${agent:-}" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
  [ -f "$dir/nginx.pid" ] && kill "$(cat "$dir/nginx.pid")" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

port=$(free_port)
nginx_conf "$dir" "$workers" "$port" "locus experiment cost"
nginx -c "$dir/nginx.conf" -p "$dir"
cat >"$dir/policy.yaml" <<YAML
version: 1
mode: enforce
targets:
  comm: [nginx]
  workers_only: true
YAML
"$locusd" --policy="$dir/policy.yaml" --socket="$dir/locusd.sock" \
  --journal="$dir/journal" --tick=1s 2>"$dir/locusd.log" &
agent=$!
# A new connection per request, as the lab's load: accepts and sends.
wrk -t1 -c8 -d$((window * rounds * 2 + 60))s -H 'Connection: close' \
  "http://127.0.0.1:$port/" >/dev/null 2>&1 &
load=$!
sleep 10  # warm-up: sensors loaded, workers seen

hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$agent/stat"; }
# window ARM: prints "ARM TICK_CPU_MS PROCESS_CPU_PERCENT".
window() {
  local c0 c1 t0 t1 tick
  c0=$(cpu_ticks)
  t0=$(date +%s%N)
  tick=$("$ctl" --socket="$dir/locusd.sock" watch --json --count="$window" |
    python3 -c 'import json, sys
ns = [int(json.loads(l).get("tick_cpu_ns", 0)) for l in sys.stdin if l.strip()]
print(f"{sum(ns) / len(ns) / 1e6:.3f}")')
  c1=$(cpu_ticks)
  t1=$(date +%s%N)
  awk -v a="$1" -v tick="$tick" -v c="$((c1 - c0))" -v t="$((t1 - t0))" -v hz="$hz" \
    'BEGIN { printf "%s %s %.3f\n", a, tick, c / hz / (t / 1e9) * 100 }'
}

for ((r = 1; r <= rounds; r++)); do
  window without
  "$ctl" --socket="$dir/locusd.sock" experiment start \
    --duration=$((window + 30))s --interval=10s >/dev/null
  window with
  "$ctl" --socket="$dir/locusd.sock" experiment stop >/dev/null
done | tee "$dir/windows.txt" | awk '{ printf "%-8s tick_cpu_ms %7s   process_cpu %6s %% of a core\n", $1, $2, $3 }'
"$ctl" --socket="$dir/locusd.sock" experiment status | head -3
awk '{ n[$1]++; tick[$1] += $2; cpu[$1] += $3 } END {
  printf "mean: without %.3f ms/tick, %.3f %%; with %.3f ms/tick, %.3f %%\n",
    tick["without"] / n["without"], cpu["without"] / n["without"],
    tick["with"] / n["with"], cpu["with"] / n["with"]
  printf "ratio with/without: tick %.2f, process %.2f\n",
    (tick["with"] / n["with"]) / (tick["without"] / n["without"]),
    (cpu["with"] / n["with"]) / (cpu["without"] / n["without"])
}' "$dir/windows.txt"
