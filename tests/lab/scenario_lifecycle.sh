#!/bin/bash
# Lab scenarios 4-6 (issue #5), in one guest boot:
#   exit_restore  SIGTERM puts every thread and IRQ back exactly; after
#                 kill -9, `locusd --restore` does (a restart runs the same
#                 restore before anything else, daemon.cc RestoreLocked);
#   reload        nginx -s reload mid-run: the new workers are adopted within
#                 a tick or two, the old ones forgotten;
#   bad_policy    a bad policy written mid-run: the old one keeps acting and
#                 `locusctl status` shows the error;
#   haproxy_threads  HAProxy's worker threads spread, across a reload, and
#                 given back (scenario_threads.sh, sharing this boot).
# Run inside a guest (tests/lab/guest.sh --forward 80); needs >= 2 nodes.
# Usage: scenario_lifecycle.sh [SCENARIO...]   (default: all, in that order)
set -uo pipefail
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/lab/scenario_threads.sh
. "$(dirname "$0")/scenario_threads.sh"

sysctl -qw kernel.numa_balancing=0

# snapshot_placement FILE: the affinity of every nginx thread and NIC IRQ.
snapshot_placement() {
  local pid tid irq _
  {
    for pid in $(nginx_master) $(nginx_workers); do
      for tid in $(threads_of "$pid"); do echo "tid $tid $(affinity "$tid")"; done
    done
    nic_irq_cpus | sed 's/^/irq /'
  } >"$1"
}
# same_placement ORIGINAL WHAT: every line of ORIGINAL holds now.
same_placement() {
  snapshot_placement "$WORK/now.txt"
  if diff "$1" "$WORK/now.txt" >"$WORK/diff.txt"; then
    log "ok: $2: all $(wc -l <"$1") threads and IRQs back to their original values"
  else
    fail "$2: not restored: $(tr '\n' ' ' <"$WORK/diff.txt")"
  fi
}
# changed_count ORIGINAL: how many entities differ from ORIGINAL now.
changed_count() {
  snapshot_placement "$WORK/now.txt"
  diff "$1" "$WORK/now.txt" | grep -c '^>'
}
# acted ORIGINAL MIN: at least MIN entities moved away from ORIGINAL.
acted() { [ "$(changed_count "$1")" -ge "$2" ]; }

exit_restore() {
  local orig=$WORK/original.txt workers
  # All workers to node 1 and IRQ steering on: the agent changes every
  # worker and the NIC's IRQs, so there is something to restore.
  policy cpus="$(node_cpus 1)"
  nginx_start 2 || return 1
  workers=($(nginx_workers))
  load 600 "http://$LAB_HOST_ADDR:$LAB_FWD_80/"
  snapshot_placement "$orig"
  log "original placement: $(tr '\n' ' ' <"$orig")"

  local round
  for round in sigterm kill9_restore; do
    locusd_start || return 1
    # Both workers and at least one NIC IRQ.
    wait_until 45 acted "$orig" 3 ||
      fail "$round: the agent changed only $(changed_count "$orig") entities in $wait_s s" || return 1
    log "$round: the agent changed $(changed_count "$orig") of $(wc -l <"$orig") entities," \
      "journal $(ctl status --json | tool get journal_entries) entries"
    case $round in
      sigterm)
        locusd_stop || fail "locusd exited non-zero on SIGTERM" || return 1
        same_placement "$orig" "after SIGTERM" || return 1
        ;;
      kill9_restore)
        locusd_kill9
        log "after kill -9: $(changed_count "$orig") entities still changed"
        "$LOCUSD" --restore --journal="$WORK/journal" >>"$WORK/locusd.log" 2>&1 ||
          fail "locusd --restore failed: $(tail -n 2 "$WORK/locusd.log")" || return 1
        same_placement "$orig" "after kill -9 and locusd --restore" || return 1
        ;;
    esac
  done
}

# new_workers_spread OLD...: nginx has new workers, each pinned to one node,
# as many on every node (give or take one).
new_workers_spread() {
  local w node
  new_workers=($(nginx_workers | grep -vxF -f <(printf '%s\n' "$@")))
  [ "${#new_workers[@]}" -ge 2 ] || return 1
  declare -A per_node=()
  for w in "${new_workers[@]}"; do
    node=$(confined_node "$w") || return 1
    per_node[$node]=$((${per_node[$node]:-0} + 1))
  done
  [ "${#per_node[@]}" -eq "${#new_workers[@]}" ] # 2 workers, 2+ nodes
}
new_workers_seen() {
  local n
  n=$(nginx_workers | grep -cvxF -f <(printf '%s\n' "$@"))
  [ "$n" -ge 2 ]
}
all_confined() {
  local w
  for w in "$@"; do confined_node "$w" >/dev/null || return 1; done
}

# Each worker confined to one node, and not all to the same one.
spread_over_two() {
  local w n nodes_seen=""
  for w in "$@"; do
    n=$(confined_node "$w") || return 1
    [[ " $nodes_seen " == *" $n "* ]] || nodes_seen="$nodes_seen $n"
  done
  [ "$(wc -w <<<"$nodes_seen")" -ge 2 ]
}

reload() {
  local old start seen tasks w master
  policy irqs=false
  locusd_ensure || return 1
  policy_apply irqs=false || return 1
  nginx_start 2 || return 1
  old=($(nginx_workers))
  # Both workers on node 0: the spread has one to move, whatever the
  # scheduler does (a worker it happens to keep on its node gains too little
  # from a pin to be pinned, and would never read as placed).
  for w in "${old[@]}"; do taskset -pc "$(node_cpus 0)" "$w" >/dev/null; done
  load 600 http://127.0.0.1/
  wait_until 30 spread_over_two "${old[@]}" ||
    fail "workers not spread over two nodes in $wait_s s" || return 1
  # The master on node 0: the new workers inherit its CPUs, so the spread
  # has one of them to move, whatever the scheduler does.
  master=$(nginx_master)
  taskset -pc "$(node_cpus 0)" "$master" >/dev/null
  log "workers ${old[*]} pinned; master $master on node 0; nginx -s reload"
  # The agent's own account, tick by tick: when it first lists each new
  # worker and when it pins it (wall time here is emulated and shared).
  ctl watch --json >"$WORK/reload.jsonl" 2>"$WORK/reload.err" &
  local watch_pid=$!
  # Subscribed before the reload (under TCG locusctl takes a second to
  # start): a pin in a tick the watch missed read as no pin at all.
  watch_started "$WORK/reload.jsonl" "$WORK/reload.err" || return 1
  "$nginx_bin" -e "$WORK/nginx.err" -c "$WORK/nginx.conf" -s reload
  wait_until 30 new_workers_seen "${old[@]}" || fail "no new workers after reload" || return 1
  seen=$(now)
  wait_until 20 new_workers_spread "${old[@]}" ||
    fail "new workers ${new_workers[*]} not spread over two nodes 20 s after they appeared" || return 1
  log "new workers spread within $(since "$seen") s of appearing (polled)"
  sleep 1
  kill "$watch_pid"
  wait "$watch_pid" 2>/dev/null
  local adoption moved="" ticks
  adoption=$(tool adoption "$WORK/reload.jsonl" "${new_workers[@]}")
  log "agent's ticks per new worker (first listed, pinned): $adoption"
  local word seen_tick pinned_tick dropped=0
  for word in $adoption; do
    [[ "$word" == dropped=* ]] && dropped=${word#dropped=} && continue
    w=${word%%:*}
    seen_tick=${word#*seen=}
    seen_tick=${seen_tick%%,*}
    pinned_tick=${word#*pinned=}
    pinned_tick=${pinned_tick%%,*}
    # Messages the stream dropped: the agent's own record of its decisions.
    if [ "$pinned_tick" = - ] && [ "$dropped" != 0 ]; then
      pinned_tick=$(ctl explain "$w" --json | tool pintick)
    fi
    log "new worker $w on node $(confined_node "$w"): first listed as a worker at tick $seen_tick, pinned at tick $pinned_tick"
    [ "$seen_tick" != - ] || fail "new worker $w never among the agent's tasks" || return 1
    [ "$pinned_tick" = - ] && continue
    # The worker that had to leave its master's node: pinned by the tick
    # after the one that first listed it.
    moved=$w
    ticks=$((pinned_tick - seen_tick))
    check_le "ticks from listing new worker $w as a worker to pinning it" "$ticks" 1 || return 1
  done
  [ -n "$moved" ] || fail "the agent pinned neither new worker" || return 1
  # Old workers close their idle connections and exit; the agent drops
  # them: no longer among its tasks.
  load_stop
  wait_until 20 bash -c "! kill -0 ${old[0]} 2>/dev/null && ! kill -0 ${old[1]} 2>/dev/null" ||
    fail "old workers ${old[*]} did not exit" || return 1
  sleep 2
  tasks=$(ctl watch --json --count=1 | tool get tasks.pid)
  log "agent's tasks after the old workers exited: $tasks"
  for w in "${old[@]}"; do
    [[ " $tasks " != *" $w "* ]] || fail "old worker $w still among the agent's tasks" || return 1
  done
  for w in "${new_workers[@]}"; do
    [[ " $tasks " == *" $w "* ]] || fail "new worker $w not among the agent's tasks" || return 1
  done
  log "ok: old workers forgotten, new ones tracked"
}

bad_policy() {
  local version json err w before
  locusd_ensure || return 1
  policy_apply irqs=false || return 1
  version=$(policy_version)
  # An unknown strategy: rejected with its line and column.
  sed 's/^\(  strategy:\).*/\1 sideways/' "$POLICY" >"$POLICY.tmp" && mv "$POLICY.tmp" "$POLICY"
  wait_until 20 policy_error_shown || fail "no policy error in status after $wait_s s" || return 1
  json=$(ctl status --json)
  err=$(tool get policy.last_error <<<"$json")
  log "status --json policy.last_error: $err"
  [[ "$err" == *policy.yaml:*:* ]] || fail "the error does not name the file and line: $err" || return 1
  [ "$(tool get policy.version <<<"$json")" = "$version" ] ||
    fail "policy version changed from $version to $(tool get policy.version <<<"$json")" || return 1
  ctl status | grep -i -q 'sideways\|error' ||
    fail "locusctl status (text) does not show the error: $(ctl status)" || return 1
  log "locusctl status shows: $(ctl status | grep -i 'error\|sideways' | head -n 1)"
  # The old policy still acts: new workers are pinned and spread by it.
  nginx_start 2 || return 1
  load 600 http://127.0.0.1/
  before=($(nginx_workers))
  wait_until 30 all_confined "${before[@]}" ||
    fail "with the bad file in place, new workers were not pinned by the old policy" || return 1
  local nodes_used=""
  for w in "${before[@]}"; do nodes_used+="$(confined_node "$w") "; done
  log "ok: new workers ${before[*]} pinned to nodes $nodes_used under the old policy"
  [ "$(echo "$nodes_used" | tr ' ' '\n' | sort -u | grep -c .)" -eq 2 ] ||
    fail "workers not spread over two nodes: $nodes_used" || return 1
  # Fixing the file clears the error.
  policy irqs=false
  wait_until 20 policy_error_cleared || fail "error still shown after the file was fixed" || return 1
  log "ok: fixed file loaded (version $(policy_version)), error cleared"
}
policy_error_shown() { [ -n "$(ctl status --json | tool get policy.last_error)" ]; }
policy_error_cleared() { [ -z "$(ctl status --json | tool get policy.last_error)" ]; }

[ $# -gt 0 ] || set -- exit_restore reload bad_policy haproxy_threads
run_scenarios "$@"
