#!/usr/bin/env bash
# What the soft home (placement.spill) saves when a CPU hog arrives on the
# node where keep-alive connections already are (issue 40). Real CPUs: this
# machine's CPUs shown to locusd as nodes by a sysfs fixture (split2: 2
# CPUs as 2 nodes). nginx with WORKERS reuseport workers on loopback, wrk's
# 16 keep-alive connections for SECONDS, and SECONDS/4 into the load a busy
# loop bound to the first CPU of node 0 until 3*SECONDS/4. Three arms,
# their order rotated each round: the kernel alone (no locusd), a hard home
# (spill off), the soft home. Per round each arm's requests/s and p50/p99;
# then the medians and soft's ratios to the others; and, from the soft
# arm's metrics stream, the ticks after the hog's end until every worker
# spends >= 95 % of its CPU time on its home node again. Run as root on a
# quiet machine (figures beside other load are noise), after building:
#   tests/bench/soft_home.sh [BUILD_DIR] [WORKERS] [ROUNDS] [SECONDS]
#                            (build, 2, 5, 32)
set -euo pipefail
# shellcheck source=tests/bench/nginx_loopback.sh
. "$(dirname "$0")/nginx_loopback.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-build}" && pwd)
workers=${2:-2}
rounds=${3:-5}
seconds=${4:-32}
locusd=$build/agent/main/locusd
locusctl=$build/agent/ctl/locusctl
sysfs=$src/tests/fixtures/split2/sys
for bin in "$locusd" nginx wrk taskset; do
  command -v "$bin" >/dev/null || { echo "missing $bin" >&2; exit 1; }
done

dir=$(mktemp -d)
hog=""
agent=""
stop_all() {
  [ -n "$hog" ] && kill "$hog" 2>/dev/null && wait "$hog" 2>/dev/null
  hog=""
  [ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
  agent=""
  [ -f "$dir/nginx.pid" ] && kill "$(cat "$dir/nginx.pid")" 2>/dev/null
  sleep 1
  return 0
}
# KEEP=1 keeps the directory (logs, wrk outputs) and says where it is.
trap 'stop_all; if [ -n "${KEEP:-}" ]; then echo "kept $dir"; else rm -rf "$dir"; fi' EXIT

port=$(free_port)
nginx_conf "$dir" "$workers" "$port" "locus soft home" "keepalive_requests 100000000;"
# policy SPILL: memory and IRQs off (the fixture's nodes share one memory).
# stability.dwell_s 2: on a host the agent has run on for a while, the pin
# that brought a worker home is long past when a hog arrives; the default
# 30 s after it would outlast a round.
policy() {
  cat <<YAML
version: 1
mode: enforce
targets: {comm: [nginx], workers_only: true}
placement:
  spill: {enabled: $1, wait_above: 0.05, busy_above: 0.9, sustain_s: 2, dwell_s: 10}
memory: {enabled: false}
irqs: {enabled: false}
stability: {dwell_s: 2}
YAML
}
policy false >"$dir/hard.yaml"
policy true >"$dir/soft.yaml"

# run ARM ROUND: prints "ARM REQUESTS_PER_S P50_MS P99_MS"; the soft arm's
# metrics stream goes to watch-ROUND.jsonl, the hog's end (Unix seconds) to
# hog_end-ARM-ROUND.
run() {
  nginx -c "$dir/nginx.conf" -p "$dir"
  if [ "$1" != off ]; then
    "$locusd" --policy="$dir/$1.yaml" --socket="$dir/locusd.sock" \
      --journal="$dir/journal-$1" --sysfs_root="$sysfs" --tick=1s \
      2>>"$dir/locusd-$1.log" &
    agent=$!
    sleep 5  # workers found and pinned home
  fi
  local watch=""
  if [ "$1" = soft ]; then
    "$locusctl" --socket="$dir/locusd.sock" watch --json >"$dir/watch-$2.jsonl" 2>/dev/null &
    watch=$!
  fi
  (sleep $((seconds / 4)); exec timeout $((seconds / 2)) taskset -c 0 sh -c 'while :; do :; done') &
  hog=$!
  python3 -c "import time; print(time.time() + $seconds * 3 / 4)" >"$dir/hog_end-$1-$2"
  wrk -t1 -c16 -d"${seconds}s" --latency "http://127.0.0.1:$port/" >"$dir/wrk.txt"
  [ -n "$watch" ] && kill "$watch" 2>/dev/null && wait "$watch" 2>/dev/null
  stop_all
  awk -v arm="$1" '
    function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
    /Requests\/sec/ { rps = $2 }
    $1 == "50%" { p50 = ms($2) }
    $1 == "99%" { p99 = ms($2) }
    END { printf "%s %.0f %.3f %.3f\n", arm, rps, p50, p99 }' "$dir/wrk.txt"
}

arms=(off hard soft)
for ((r = 0; r < rounds; r++)); do
  for ((i = 0; i < 3; i++)); do
    line=$(run "${arms[$(((r + i) % 3))]}" "$r")
    echo "round $((r + 1)) $line"
  done
done | tee "$dir/rounds.txt" |
  awk '{ printf "round %s %-5s %8s req/s  p50 %7s ms  p99 %7s ms\n", $2, $3, $4, $5, $6 }'
python3 - "$dir/rounds.txt" "$dir" "$rounds" <<'PY'
import json, statistics, sys
from datetime import datetime
rows = [line.split() for line in open(sys.argv[1])]
med = {}
for arm in ("off", "hard", "soft"):
    r = [row for row in rows if row[2] == arm]
    med[arm] = [statistics.median(float(x[i]) for x in r) for i in (3, 4, 5)]
    print(f"median {arm:5} {med[arm][0]:8.0f} req/s  p50 {med[arm][1]:.3f} ms  p99 {med[arm][2]:.3f} ms")
for other in ("off", "hard"):
    print(f"soft/{other}: throughput {med['soft'][0] / med[other][0]:.2f}x, "
          f"p99 {med['soft'][2] / med[other][2]:.2f}x")

def seconds(stamp):  # protobuf's JSON Timestamp, to Unix seconds
    day, _, frac = stamp.rstrip("Z").partition(".")
    return datetime.fromisoformat(day + "+00:00").timestamp() + float("0." + (frac or "0"))

# Soft arm: the ticks after the hog's end until every worker with CPU time
# spends >= 95 % of it on its home node, in that tick and every later one.
back = []
for r in range(int(sys.argv[3])):
    hog_end = float(open(f"{sys.argv[2]}/hog_end-soft-{r}").read())
    ticks = []
    for line in open(f"{sys.argv[2]}/watch-{r}.jsonl"):
        if not line.startswith("{"):
            continue
        m = json.loads(line)
        if seconds(m["time"]) <= hog_end:
            continue
        shares = [t.get("home_time_ratio", 0) for t in m.get("tasks", [])
                  if t.get("role") == "TASK_ROLE_WORKER" and t.get("home_time_ratio", 0) >= 0]
        ticks.append(bool(shares) and min(shares) >= 0.95)
    home = next((i + 1 for i in range(len(ticks)) if all(ticks[i:])), None)
    back.append(home)
    print(f"round {r + 1} soft: every worker >= 95 % at home from tick "
          f"{home if home else '-'} after the hog's end ({len(ticks)} ticks watched)")
PY
# What the soft home did, and why not where it did nothing.
grep -h "widened\|narrowed\|saturated" "$dir"/locusd-soft.log | sort | uniq -c |
  sort -rn | head -8 || true
