#!/bin/bash
# Lab scenarios for connection steering (issue #17), in one guest boot, with
# the guest's real topology:
#   steered  nginx with `reuseport`, one worker per CPU, clients on every CPU
#            (on loopback a SYN is handled on the connecting CPU): with the
#            workers placed but steering off about 1/N of the connections
#            reach a worker of the client's node; with steering >= 99 %.
#            Then `nginx -s reload` while connecting: no connection fails.
#   skew     every client on node 0's CPUs, spill_above_busy at its floor:
#            node 0 spills part of its new connections, which node 1's
#            workers take.
# Asserted outside Locus: nginx's access log ($pid $request_uri) joined with
# each client's request, and each worker's affinity (labtool.py conns).
# Run inside a guest (tests/lab/guest.sh); needs >= 2 nodes.
# Usage: scenario_connections.sh [SCENARIO...]   (default: all, in order)
set -uo pipefail
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"

sysctl -qw kernel.numa_balancing=0
PORT=81
ALL_CPUS=$(cpulist_expand "$(</sys/devices/system/cpu/online)" | paste -sd,)

conns() { tool conns "$PORT" "$1" "$2" "$WORK/access.txt"; }
field() { local w; for w in $2; do [[ "$w" == "$1"=* ]] && echo "${w#*=}"; done; }

steered() {
  policy irqs=false connections=false
  nginx_reuseport "$(cpulist_expand "$ALL_CPUS" | wc -l)" "$PORT" || return 1
  locusd_ensure || return 1
  policy_apply irqs=false connections=false || return 1
  warm_until_placed "$PORT" "$ALL_CPUS" || return 1
  local off on during
  off=$(conns 200 "$ALL_CPUS")
  log "workers placed, steering off: $off"
  policy_apply irqs=false connections=true || return 1
  wait_until 20 bash -c "'$LOCUSCTL' --socket='$SOCK' status | grep -q ': steered'" ||
    fail "the group was not steered: $(ctl status | grep connections)" || return 1
  # Ticks after the attach (counted, not slept: a loaded guest ticks late):
  # the maps as the next scans see the group.
  ctl watch --count=3 >/dev/null || fail "no ticks from locusctl watch" || return 1
  on=$(conns 200 "$ALL_CPUS")
  log "steering on: $on"
  ctl status | grep -A"$(nodes)" '^connections' | sed 's/^/    /'
  check_ge "connections reaching a worker of their node" "$(field share "$on")" 0.99 || return 1
  [ "$(field failed "$on")" = 0 ] || fail "failed connections: $on" || return 1

  # A reload while connecting: new workers, the same sockets.
  conns 400 "$ALL_CPUS" >"$WORK/reload.txt" &
  local clients=$!
  sleep 1
  "$nginx_bin" -e "$WORK/nginx.err" -c "$WORK/nginx.conf" -s reload
  wait "$clients"
  during=$(<"$WORK/reload.txt")
  # Joined after the reload, against workers not placed yet: only the
  # failures count here.
  log "connecting across a reload: failed=$(field failed "$during") of $(($(cpulist_expand "$ALL_CPUS" | wc -l) * 400))"
  [ "$(field failed "$during")" = 0 ] || fail "connections failed across the reload" || return 1
}

skew() {
  policy irqs=false connections=true spill=0.1
  nginx_reuseport "$(cpulist_expand "$ALL_CPUS" | wc -l)" "$PORT" || return 1
  locusd_ensure || return 1
  policy_apply irqs=false connections=true spill=0.1 || return 1
  warm_until_placed "$PORT" "$ALL_CPUS" || return 1
  local node0 out status spilled
  node0=$(node_cpus 0)
  conns 300 "$node0" >/dev/null # spill follows the load: let it settle
  out=$(conns 300 "$node0")
  status=$(ctl status)
  log "all clients on node 0 ($node0): $out"
  grep -A"$(nodes)" '^connections' <<<"$status" | sed 's/^/    /'
  spilled=$(sed -n 's/^  node 0: .*, \([0-9]*\) spilled,.*/\1/p' <<<"$status")
  check_ge "node 0's connections spilled" "${spilled:-0}" 1 || return 1
  check_le "share served by node 0's own workers" "$(field share "$out")" 0.99 || return 1
}

[ $# -gt 0 ] || set -- steered skew
run_scenarios "$@"
