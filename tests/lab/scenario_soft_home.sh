#!/bin/bash
# Lab scenario 9 (issue #40): the soft home. nginx's two workers under load,
# one placed per node; then busy loops on every CPU of node 0 (a hog)
# starting and stopping every LAB_HOG_FLIP_SECONDS for LAB_HOG_SECONDS (CI:
# one 40 s hog). The worker whose home is node 0 is widened to node 1 while
# the hog runs and confined to its home again once it ends; none of its pages
# is moved while it is widened; its spill changes at most once per
# spill.dwell_s (no ping-pong, over 5 minutes of a hog switching every 30 s
# under LOCUS_LAB_FULL); and SIGTERM gives every thread back the CPUs it had
# before the agent. The figures are the agent's own stream (`locusctl watch`).
# Run inside a guest (tests/lab/guest.sh --forward 80); needs 2 nodes.
set -uo pipefail
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"

HOG_SECONDS=${LAB_HOG_SECONDS:-40}
FLIP_SECONDS=${LAB_HOG_FLIP_SECONDS:-$HOG_SECONDS}
DWELL_S=30 # placement.spill.dwell_s of the built-in default

# worker_on NODE: the nginx worker confined to NODE, if one is.
worker_on() {
  local w
  for w in $(nginx_workers); do
    [ "$(confined_node "$w" 2>/dev/null)" = "$1" ] && echo "$w" && return 0
  done
  return 1
}
one_per_node() { worker_on 0 >/dev/null && worker_on 1 >/dev/null; }
# spans PID NODES: every thread of PID may run on exactly NODES ("0,1").
spans() {
  local tid
  for tid in $(threads_of "$1"); do
    [ "$(nodes_of_cpus "$(affinity "$tid")")" = "$2" ] || return 1
  done
}
# placement: "tid:cpus" of every nginx worker thread.
placement() {
  local w tid
  for w in $(nginx_workers); do
    for tid in $(threads_of "$w"); do echo -n "$tid:$(affinity "$tid") "; done
  done
}

soft_home() {
  policy softhome=true irqs=false connections=false
  nginx_start 2 || return 1
  # Every worker starts on node 1: the spread pins one of them to node 0
  # (all its time was off that home), and the one it keeps on node 1 is
  # confined already. Left free, two workers that each happened to run on
  # their home node gained too little from a pin to be pinned (below
  # min_gain: so it failed beside the sanitizer tree's tests).
  start_on_node 1 $(nginx_workers)
  local w before
  before=$(placement)
  # The load's client runs on the hog's node: node 1 stays the spare one.
  load $((HOG_SECONDS + 300)) "http://$LAB_HOST_ADDR:$LAB_FWD_80/" "$(node_cpus 0)"
  locusd_start || return 1
  ctl watch --json >"$WORK/softhome.jsonl" 2>"$WORK/softhome.err" &
  local watch_pid=$!
  watch_started "$WORK/softhome.jsonl" "$WORK/softhome.err" || return 1
  wait_until 90 one_per_node || fail "workers not one per node: $(placement)" || return 1
  local started widened_in
  w=$(worker_on 0)
  log "worker $w at home on node 0, the other on node 1; hog on node 0's CPUs $(node_cpus 0): ${HOG_SECONDS} s, switching every ${FLIP_SECONDS} s"
  started=$(now)
  hog_start 0
  # Widening waits for sustain_s of saturation and for stability.dwell_s
  # after the pin that brought the worker home.
  wait_until 120 spans "$w" 0,1 ||
    fail "worker $w not widened 120 s into the hog: $(placement); $(ctl explain "$w" | tail -n 2)" || return 1
  widened_in=$(since "$started")
  log "ok: worker $w widened to nodes 0,1 ${widened_in} s after the hog started"
  local end=$((started + HOG_SECONDS * 100)) on=1 flip=$((started + FLIP_SECONDS * 100))
  while [ "$(now)" -lt "$end" ]; do
    if [ "$(now)" -ge "$flip" ]; then
      if [ "$on" = 1 ]; then hog_stop; on=0; else hog_start 0; on=1; fi
      flip=$((flip + FLIP_SECONDS * 100))
    fi
    sleep 1
  done
  hog_stop
  local calm
  calm=$(now)
  wait_until $((DWELL_S + 90)) spans "$w" 0 ||
    fail "worker $w not back home $((DWELL_S + 90)) s after the hog ended: $(placement); $(ctl explain "$w" | tail -n 2)" || return 1
  log "ok: worker $w confined to node 0 again $(since "$calm") s after the hog ended"
  sleep 2
  kill "$watch_pid" 2>/dev/null
  wait "$watch_pid" 2>/dev/null
  local seen changes gap moved
  seen=$(tool softhome "$WORK/softhome.jsonl" "$w")
  log "the agent's stream, worker $w: $seen"
  read -r changes gap moved < <(sed -E 's/.*changes=([0-9]+) min_gap=([^ ]+) moved_while_widened=([0-9]+).*/\1 \2 \3/' <<<"$seen")
  [ "$changes" -ge 2 ] || fail "the stream shows $changes change(s) of worker $w's spill, not a widening and its end" || return 1
  check_le "page moves of worker $w applied while it was widened" "$moved" 0 || return 1
  # The agent's clock stamps each message: two changes at least dwell_s
  # apart (less a tick of stamping).
  [ "$gap" = - ] || check_ge "seconds between two changes of worker $w's spill" "$gap" $((DWELL_S - 1)) || return 1
  load_stop
  locusd_stop || fail "locusd exited non-zero on SIGTERM" || return 1
  [ "$(placement)" = "$before" ] ||
    fail "after SIGTERM: $(placement), before the agent: $before" || return 1
  log "ok: after SIGTERM every worker thread has its CPUs of before the agent: $before"
}

run_scenarios soft_home
