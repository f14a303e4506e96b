#!/bin/bash
# Lab scenario 7 (issue #5): no fighting. With the kernel's NUMA balancing on
# and irqbalance running in the foreground, nginx serving traffic through the
# NIC and its memory first-touched on node 1, Locus runs for two minutes;
# counted from its metrics stream, no entity is moved back and forth: each
# thread and IRQ is moved at most once, none after someone else changed it,
# and no process's pages are sent to more than one node.
# Run inside a guest (tests/lab/guest.sh --forward 80); needs >= 2 nodes.
set -uo pipefail
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"

WINDOW=${LAB_FIGHT_SECONDS:-120}

# sample_placement FILE: one line per second, the placement of every nginx
# worker thread and NIC IRQ, until killed.
sample_placement() {
  local w tid irq _ line
  while true; do
    line="$(now)"
    for w in $(nginx_workers); do
      for tid in $(threads_of "$w"); do line+=" tid$tid=$(nodes_of_cpus "$(affinity "$tid")")"; done
    done
    while read -r irq _; do line+=" irq$irq=$(irq_cpus "$irq")"; done < <(nic_irqs)
    echo "$line"
    sleep 1
  done >"$1"
}

# flips FILE: per entity, how often its sampled placement changed, and the
# entities that came back to a placement they had left (A -> B -> A).
flips() {
  awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "=");
           if (kv[1] in last && last[kv[1]] != kv[2]) {
             changes[kv[1]]++
             if ((kv[1] SUBSEP kv[2]) in seen) back[kv[1]]++ }
           last[kv[1]] = kv[2]; seen[kv[1], kv[2]] = 1 } }
       END { n = 0; b = ""; for (e in changes) { if (changes[e] > n) n = changes[e] }
             for (e in back) b = b e ":" back[e] " "
             printf "max_changes=%d back_and_forth=%s\n", n, (b == "" ? "-" : b) }' "$1"
}

no_fighting() {
  sysctl -qw kernel.numa_balancing=1
  irqbalance --foreground >"$WORK/irqbalance.log" 2>&1 &
  local irqbalance_pid=$!
  policy
  nginx_start 2 numactl --cpunodebind=1 || return 1
  load $((WINDOW + 120)) "http://$LAB_HOST_ADDR:$LAB_FWD_80/"
  # Started in dry_run, enforcing once the stream is recorded: every move
  # the agent makes falls in the window.
  locusd_start --mode=dry_run || return 1
  ctl watch --json --count="$WINDOW" >"$WORK/watch.jsonl" 2>"$WORK/watch.err" &
  local watch_pid=$!
  ctl mode enforce >/dev/null || fail "locusctl mode enforce" || return 1
  sensors_up || return 1
  local numa_ok
  numa_ok=$(ctl status --json | tool get sensors.ok | awk '{ print $2 }')
  [ "$numa_ok" = True ] || fail "NUMA-fault sensor down with numa_balancing=1" || return 1
  sample_placement "$WORK/samples.txt" &
  local sampler_pid=$!
  log "watching ${WINDOW} s with numa_balancing=1 and irqbalance (pid $irqbalance_pid) running"
  wait "$watch_pid"
  kill "$sampler_pid" 2>/dev/null
  wait "$sampler_pid" 2>/dev/null
  kill -0 "$irqbalance_pid" 2>/dev/null || fail "irqbalance died: $(tail -n 3 "$WORK/irqbalance.log")" || return 1
  kill "$irqbalance_pid"
  load_stop

  local ticks moves observed
  ticks=$(grep -c '^{' "$WORK/watch.jsonl")
  moves=$(tool moves "$WORK/watch.jsonl")
  observed=$(flips "$WORK/samples.txt")
  log "$ticks ticks; Locus's moves: $moves"
  log "observed placements (every second, by anyone): $observed"
  log "kernel NUMA balancing: $(grep -E '^numa_(pages_migrated|hint_faults) ' /proc/vmstat | tr '\n' ' ')"
  [ "$ticks" -ge $((WINDOW * 3 / 4)) ] || fail "only $ticks ticks in ${WINDOW} s" || return 1
  local total=${moves#*total=} most=${moves#*max_per_entity=} against=${moves#*against_external=}
  local memflip=${moves#*memory_target_changes=}
  [ "${total%% *}" -ge 1 ] || fail "Locus made no move at all: nothing was tested" || return 1
  check_le "Locus's moves of one entity in ${WINDOW} s" "${most%% *}" 1 || return 1
  check_le "Locus's moves of an entity after someone else moved it" "${against%% *}" 0 || return 1
  [ "${memflip%% *}" = - ] || fail "pages of pid(s) ${memflip%% *} sent to more than one node" || return 1
  log "ok: no process's pages sent to two nodes"
}

run_scenarios no_fighting
