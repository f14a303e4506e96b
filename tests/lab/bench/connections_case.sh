#!/bin/bash
# The connection steering benchmark's guest side (run INSIDE a lab guest as
# root by connections.sh, which documents the benchmark): nginx with one
# worker per CPU listening with `reuseport` on 127.0.0.1:81, measured under
#   none          no agent; nginx binds its workers one per CPU itself
#                 (worker_cpu_affinity auto), the kernel's hash picks the socket
#   locus         locusd places the workers, connection steering off
#   locus_steer   locusd places the workers and steers connections
# Per mode: the share of connections reaching a worker of the client CPU's
# node (BENCH_CONNS connections from a process pinned to each CPU, joined
# with nginx's access log: labtool.py conns), and requests/s of one wrk per
# node pinned to that node's CPUs, a new connection per request, for
# BENCH_SECONDS, summed. Prints one "RESULT mode share req/s failed" line
# per mode.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lab/lib.sh
. "$here/../lib.sh"

sysctl -qw kernel.numa_balancing=0
PORT=81
CONNS=${BENCH_CONNS:-200}
SECONDS_RUN=${BENCH_SECONDS:-10}
ALL_CPUS=$(cpulist_expand "$(</sys/devices/system/cpu/online)" | paste -sd,)
WORKERS=$(cpulist_expand "$ALL_CPUS" | wc -l)

measure() { # measure MODE
  local out share failed n pids=() rps=0 r
  out=$(tool conns "$PORT" "$CONNS" "$ALL_CPUS" "$WORK/access.txt")
  share=${out#*share=}
  share=${share%% *}
  failed=${out#*failed=}
  failed=${failed%% *}
  for n in $(seq 0 $(($(nodes) - 1))); do
    taskset -c "$(node_cpus "$n")" wrk -t1 -c8 -d"${SECONDS_RUN}s" \
      -H "Connection: close" "http://127.0.0.1:$PORT/" >"$WORK/wrk.$n" 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}"
  for n in $(seq 0 $(($(nodes) - 1))); do
    r=$(awk '/Requests\/sec/ { print $2 }' "$WORK/wrk.$n")
    rps=$(echo "$rps + ${r:-0}" | bc)
  done
  echo "RESULT $1 $share $rps $failed"
}

none() {
  nginx_reuseport "$WORKERS" "$PORT" "worker_cpu_affinity auto;" || return 1
  measure none
  nginx_stop
}

with_locus() { # with_locus MODE CONNECTIONS_BOOL
  policy irqs=false connections="$2"
  nginx_reuseport "$WORKERS" "$PORT" || return 1
  locusd_ensure || return 1
  policy_apply irqs=false connections="$2" || return 1
  warm_until_placed "$PORT" "$ALL_CPUS" || return 1
  if [ "$2" = true ]; then
    wait_until 20 bash -c "'$LOCUSCTL' --socket='$SOCK' status | grep -q ': steered'" || return 1
  fi
  measure "$1"
  nginx_stop
}

none
with_locus locus false
with_locus locus_steer true
lab_cleanup
