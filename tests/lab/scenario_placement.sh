#!/bin/bash
# Lab scenarios 1-3 (issue #5), in one guest boot:
#   memory_nginx   an nginx worker whose memory was first-touched on node 1
#                  runs on node 0: Locus moves its pages home (>= 95 % local);
#   memory_600mb   the same with lab_memhog's 600 MiB;
#   threads        nginx workers the scheduler moves across nodes are each
#                  pinned to a home node, spread per policy, and their
#                  cross-node migrations stop;
#   irq            the NIC's IRQ on node 0, the workers serving its traffic on
#                  node 1: the IRQ moves to node 1 and NET_RX softirqs follow.
# Run inside a guest (tests/lab/guest.sh --forward 80); needs >= 2 nodes.
# Usage: scenario_placement.sh [SCENARIO...]   (default: all, in that order)
set -uo pipefail
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"

sysctl -qw kernel.numa_balancing=0 # Locus alone moves pages here

memory_nginx() {
  # IRQ steering stays off until the irq scenario: an IRQ moved here would
  # make that scenario's own setting look like someone else's change.
  policy irqs=false
  nginx_start 2 numactl --cpunodebind=1 || return 1
  local workers a t before after start node
  workers=($(nginx_workers))
  a=${workers[0]}
  for t in $(threads_of "$a"); do taskset -pc "$(node_cpus 0)" "$t" >/dev/null; done
  before=$(tool pages "$a")
  log "worker $a (runs on node 0, memory first-touched on node 1): $before"
  [[ "$before" == *runs_on=0\ * ]] || fail "setup: worker $a not on node 0" || return 1
  local share=${before#share=}
  check_le "setup: own pages already local" "${share%% *}" 0.5 || return 1

  locusd_start || return 1
  sensors_up || return 1
  start=$(now)
  wait_until 60 own_pages_local "$a" 0.95
  after=$(tool pages "$a")
  log "after $(since "$start") s: $after"
  share=${after#share=}
  check_ge "worker $a own pages on its node" "${share%% *}" 0.95 || return 1
  node=$(confined_node "$a") || fail "worker $a not confined to one node" || return 1
  [ "$node" = 0 ] || fail "worker $a was moved to node $node; its pages were to come home to node 0" || return 1
  log "locusctl explain $a:"
  ctl explain "$a" | head -n 6 | sed 's/^/    /'
  nginx_stop
}

# own_pages_local PID MIN: the share of PID's own pages on its node >= MIN.
own_pages_local() {
  local out share
  out=$(tool pages "$1") || return 1
  share=${out#share=}
  [ "$(echo "${share%% *} >= $2" | bc)" = 1 ]
}

memory_600mb() {
  locusd_ensure || return 1
  policy_apply comm=lab_memhog workers_only=false irqs=false || return 1
  [ -x "$LAB_MEMHOG" ] || fail "no lab_memhog at $LAB_MEMHOG" || return 1
  # Started under another name (it names itself lab_memhog when in place):
  # the agent, selecting it by name, must not act on its setup.
  ln -sf "$LAB_MEMHOG" "$WORK/lab_memhog_prep"
  "$WORK/lab_memhog_prep" --mb=600 --touch_node=1 --run_node=0 >"$WORK/memhog.out" 2>"$WORK/memhog.err" &
  memhog_pid=$!
  local start after share
  start=$(now)
  wait_until 180 grep -q '^ready' "$WORK/memhog.out" ||
    fail "lab_memhog not ready: $(cat "$WORK/memhog.err")" || return 1
  log "600 MiB first-touched on node 1 in $(since "$start") s; now runs on node 0"
  start=$(now)
  wait_until 60 own_pages_local "$memhog_pid" 0.95
  log "after $(since "$start") s: $(tool pages "$memhog_pid")"
  after=$(tool pages "$memhog_pid")
  share=${after#share=}
  check_ge "lab_memhog pages on its node" "${share%% *}" 0.95 || return 1
  share=${after#*all_share=}
  check_ge "lab_memhog resident pages (numa_maps, all mappings) on its node" "${share%% *}" 0.95 || return 1
  memhog_stop
}

T=/sys/kernel/tracing
# xnode_window SECONDS PIDS...: cross-node migrations of PIDS over SECONDS,
# from sched:sched_migrate_task (the kernel's, not Locus's, count). A worker
# asleep when it was pinned leaves its old CPU at its next wakeup: labtool
# counts that apart ("joined"), it is the pin taking effect.
xnode_window() {
  local seconds=$1
  shift
  echo 0 >$T/tracing_on
  echo >$T/trace
  echo 'comm == "nginx"' >$T/events/sched/sched_migrate_task/filter
  echo 1 >$T/events/sched/sched_migrate_task/enable
  echo 1 >$T/tracing_on
  sleep "$seconds"
  echo 0 >$T/tracing_on
  cat $T/trace >"$WORK/trace.txt"
  echo 0 >$T/events/sched/sched_migrate_task/enable
  tool xnode "$WORK/trace.txt" "$@"
}

all_confined() {
  local w
  for w in "$@"; do confined_node "$w" >/dev/null || return 1; done
}

threads() {
  local n=$(($(nodes))) count=4 workers before after start w node
  locusd_ensure || return 1
  policy_apply irqs=false || return 1
  ctl mode dry_run >/dev/null || fail "locusctl mode dry_run" || return 1
  nginx_start "$count" || return 1
  workers=($(nginx_workers))
  load 120 http://127.0.0.1/
  before=$(xnode_window 10 "${workers[@]}")
  log "without Locus (dry_run), 10 s under load: $before"
  ctl mode enforce >/dev/null || fail "locusctl mode enforce" || return 1
  start=$(now)
  wait_until 30 all_confined "${workers[@]}" ||
    fail "workers not all pinned to a node within $wait_s s" || return 1
  log "every worker pinned to one node $(since "$start") s after enforce"
  after=$(xnode_window 15 "${workers[@]}")
  log "with Locus, 15 s under load: $after"
  load_stop
  local cross=${after#cross=}
  check_le "cross-node migrations of the workers per minute" "$((${cross%% *} * 4))" 0 || return 1
  # spread: nodes of equal CPUs get count/n workers each, give or take one.
  declare -A per_node=()
  for w in "${workers[@]}"; do
    node=$(confined_node "$w")
    per_node[$node]=$((${per_node[$node]:-0} + 1))
  done
  local spread="" min=$count max=0
  for ((node = 0; node < n; node++)); do
    spread+="node$node:${per_node[$node]:-0} "
    ((${per_node[$node]:-0} < min)) && min=${per_node[$node]:-0}
    ((${per_node[$node]:-0} > max)) && max=${per_node[$node]:-0}
  done
  log "workers per node: $spread"
  check_le "spread: workers per node, most minus fewest" "$((max - min))" 1 || return 1
  nginx_stop
}

irq() {
  local node far_cpus near_cpus irq_n start share before after w
  far_cpus=$(node_cpus 0)
  near_cpus=$(node_cpus 1)
  [ -n "${LAB_FWD_80:-}" ] || fail "no forwarded port (guest.sh --forward 80)" || return 1
  locusd_ensure || return 1
  # The consumers live on node 1: the policy lets workers use only its CPUs.
  # IRQ steering stays off until the IRQ is where the scenario wants it: a
  # change the agent sees after its own is someone else's, and left alone.
  policy_apply cpus="$near_cpus" irqs=false || return 1
  nginx_start 2 || return 1
  local workers=($(nginx_workers))
  # Traffic through the NIC: to this machine's loopback, forwarded back in.
  load 180 "http://$LAB_HOST_ADDR:$LAB_FWD_80/" "$near_cpus"
  wait_until 30 all_confined "${workers[@]}" ||
    fail "workers not pinned within $wait_s s" || return 1
  for w in "${workers[@]}"; do
    node=$(confined_node "$w")
    [ "$node" = 1 ] || fail "worker $w on node $node, not 1" || return 1
  done
  irq_n=$(nic_rx_irq)
  [ -n "$irq_n" ] || fail "no NIC receive IRQ for $LAB_NIC" || return 1
  echo "$far_cpus" >"/proc/irq/$irq_n/smp_affinity_list" ||
    fail "cannot set IRQ $irq_n to $far_cpus" || return 1
  before=$(net_rx_counts)
  sleep 5
  after=$(net_rx_counts)
  log "NIC $LAB_NIC receive IRQ $irq_n on cpus $(irq_cpus "$irq_n") (node 0), workers on node 1:" \
    "NET_RX share on node 1 $(share_on_cpus "$before" "$after" "$near_cpus") over 5 s"
  policy_apply cpus="$near_cpus" irqs=true || return 1
  start=$(now)
  wait_until 30 irq_on_node "$irq_n" 1 ||
    fail "IRQ $irq_n still on cpus $(irq_cpus "$irq_n") after $wait_s s" || return 1
  log "IRQ $irq_n moved to cpus $(irq_cpus "$irq_n") $(since "$start") s after steering was enabled"
  before=$(net_rx_counts)
  sleep 10
  after=$(net_rx_counts)
  share=$(share_on_cpus "$before" "$after" "$near_cpus")
  log "NET_RX softirqs per CPU over 10 s: before [$before] after [$after]"
  load_stop
  log "wrk: $(grep -E 'Requests/sec' "$WORK/wrk.out")"
  check_ge "NET_RX softirqs on node 1 (the consumers' node)" "$share" 0.9 || return 1
  log "locusctl explain irq:$irq_n:"
  ctl explain "irq:$irq_n" | head -n 4 | cut -c1-300 | sed 's/^/    /'
}
irq_on_node() { [ "$(nodes_of_cpus "$(irq_cpus "$1")")" = "$2" ]; }

[ $# -gt 0 ] || set -- memory_nginx memory_600mb threads irq
run_scenarios "$@"
