#!/bin/bash
# Lab scenario (issue #21): nginx in cgroup v2 cpusets. One nginx in a
# cpuset of node 1's CPUs and memory, one with both nodes' CPUs but memory on
# node 0, both under load on loopback while Locus enforces: counted from its
# metrics stream, no action is forbidden or fails; the second one's workers,
# started on node 1's CPUs, are homed on node 0 (at least one within the
# window; a starved guest's agent may pin the other later), and their
# anonymous pages stay there. Then the first one's
# cpuset moves from node 1 to node 0 at run time: the plan follows within a
# few scans, and stopping the agent restores what it changed.
# Run inside a guest (tests/lab/guest.sh); needs 2 nodes.
set -uo pipefail
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"

WINDOW=${LAB_CPUSET_SECONDS:-40}
CG=/sys/fs/cgroup

# cgroup_setup: cgroup2 with the cpuset controller, and the two pods.
cgroup_setup() {
  mountpoint -q "$CG" || mount -t cgroup2 none "$CG" || fail "mount cgroup2" || return 1
  grep -qw cpuset "$CG/cgroup.controllers" || fail "no cpuset controller" || return 1
  echo +cpuset >"$CG/cgroup.subtree_control" || fail "enable cpuset" || return 1
  mkdir -p "$CG/lab_node1" "$CG/lab_mems0"
  node_cpus 1 >"$CG/lab_node1/cpuset.cpus"
  echo 1 >"$CG/lab_node1/cpuset.mems"
  echo "$(node_cpus 0),$(node_cpus 1)" >"$CG/lab_mems0/cpuset.cpus"
  echo 0 >"$CG/lab_mems0/cpuset.mems"
  log "cpusets: lab_node1 cpus $(<"$CG/lab_node1/cpuset.cpus.effective") mems $(<"$CG/lab_node1/cpuset.mems.effective"); lab_mems0 cpus $(<"$CG/lab_mems0/cpuset.cpus.effective") mems $(<"$CG/lab_mems0/cpuset.mems.effective")"
}

# nginx_in CGROUP PORT: two nginx workers in the cgroup, serving PORT.
nginx_in() {
  local name=$1 port=$2
  cat >"$WORK/$name.conf" <<EOF
worker_processes 2;
pid $WORK/$name.pid;
error_log $WORK/$name.err warn;
events { worker_connections 1024; }
http {
  access_log off;
  server { listen 127.0.0.1:$port; location / { return 200 "ok\n"; } }
}
EOF
  bash -c "echo \$\$ >$CG/$name/cgroup.procs && exec $nginx_bin -e $WORK/$name.err -c $WORK/$name.conf" ||
    fail "nginx in $name" || return 1
  wait_until 30 has_two_workers "$name" ||
    fail "nginx in $name did not start 2 workers: $(tail -n 3 "$WORK/$name.err")" || return 1
}
workers_of() {
  local master
  master=$(cat "$WORK/$1.pid" 2>/dev/null) || return 0
  [ -n "$master" ] && pgrep -P "$master" -f 'nginx: worker' | sort -n
}
has_two_workers() { [ "$(workers_of "$1" | wc -l)" -eq 2 ]; }
nginx_in_stop() {
  "$nginx_bin" -e "$WORK/$1.err" -c "$WORK/$1.conf" -s stop 2>/dev/null
}

# outcomes FILE: "APPLIED=3 FORBIDDEN=0 ..." over every action in a stream.
outcomes() {
  "$PY" - "$1" <<'EOF'
import collections, json, sys
count = collections.Counter()
for line in open(sys.argv[1]):
    if line.startswith("{"):
        for a in json.loads(line).get("actions", []):
            count[a.get("outcome", "?").replace("ACTION_OUTCOME_", "")] += 1
print(" ".join(f"{k}={v}" for k, v in sorted(count.items())) or "none")
EOF
}

# pins FILE [OP [OUTCOME]]: "PID:NODE" for every pin (or OP: page move) in a
# stream, each once; with OUTCOME (APPLIED, DRY_RUN) only those.
pins() {
  "$PY" - "$1" "${2:-pin_thread}" "${3:-}" <<'EOF'
import json, sys
seen = set()
for line in open(sys.argv[1]):
    if line.startswith("{"):
        for a in json.loads(line).get("actions", []):
            op = a.get(sys.argv[2])
            outcome = a.get("outcome", "").replace("ACTION_OUTCOME_", "")
            if op and sys.argv[3] in ("", outcome):
                node = op.get("node", op.get("to_node", 0))
                seen.add(f"{op.get('pid', 0)}:{node}")
print(" ".join(sorted(seen)))
EOF
}

# node_of_worker PID: the node(s) its threads may run on.
node_of_worker() { nodes_of_cpus "$(affinity "$1")"; }
# pinned_home PID: the agent's own record (explain) has a pin of PID, and
# its threads now run on node 0 alone.
pinned_home() {
  [ "$(ctl explain "$1" --json | tool pintick)" != - ] && [ "$(node_of_worker "$1")" = 0 ]
}
any_pinned_home() {
  local w
  for w in $(workers_of lab_mems0); do pinned_home "$w" && return 0; done
  return 1
}

cpusets() {
  cgroup_setup || return 1
  policy irqs=false
  nginx_in lab_node1 8081 || return 1
  nginx_in lab_mems0 8082 || return 1
  # Its workers start on node 1's CPUs (the cpuset allows them): their home
  # is node 0 (the cpuset's memory), so a pin there gains all their time.
  # Left free, a worker that ran on node 0 by itself gained too little from
  # a pin to be pinned, and beside the sanitizer tree's build neither was.
  start_on_node 1 $(workers_of lab_mems0)
  local w start_cpus
  start_cpus=$(node_cpus 1)
  wrk -t1 -c8 -d$((WINDOW + 60))s http://127.0.0.1:8081/ >"$WORK/wrk1.out" 2>&1 &
  local wrk1=$!
  wrk -t1 -c8 -d$((WINDOW + 60))s http://127.0.0.1:8082/ >"$WORK/wrk2.out" 2>&1 &
  local wrk2=$!
  # Started in dry_run, enforcing once the stream is recorded: every action
  # the agent takes falls in the window.
  locusd_start --mode=dry_run || return 1
  ctl watch --json --count="$WINDOW" >"$WORK/watch.jsonl" 2>"$WORK/watch.err" &
  local watch_pid=$!
  watch_started "$WORK/watch.jsonl" "$WORK/watch.err" || return 1
  ctl mode enforce >/dev/null || fail "locusctl mode enforce" || return 1
  wait "$watch_pid"
  local counted
  counted=$(outcomes "$WORK/watch.jsonl")
  log "actions in ${WINDOW} s: $counted"
  grep -E 'plan: .*(lab_node1|lab_mems0)' "$WORK/locusd.log" | cut -c1-200 | sed 's/^/  /' | tail -n 4
  case " $counted " in
    *" FORBIDDEN="* | *" FAILED="*) fail "actions forbidden or failed: $counted" || return 1 ;;
  esac
  # planned: every pin of the window, the dry run's included (the homes the
  # plan chose); pinned: those applied.
  local planned pinned moved share
  planned=" $(pins "$WORK/watch.jsonl") "
  pinned=" $(pins "$WORK/watch.jsonl" pin_thread APPLIED) "
  moved=" $(pins "$WORK/watch.jsonl" migrate_pages) "
  log "pins planned (pid:node): $planned; applied: $pinned; page moves (pid:node): $moved"
  for w in $(workers_of lab_node1); do
    [ "$(node_of_worker "$w")" = 1 ] || fail "lab_node1 worker $w on node(s) $(node_of_worker "$w")" || return 1
    case "$planned" in *" $w:"*) fail "lab_node1 worker $w pinned: it was home" || return 1 ;; esac
  done
  local homed=0
  for w in $(workers_of lab_mems0); do
    log "lab_mems0 worker $w: runs on node(s) $(node_of_worker "$w"), pages $(tool pages "$w")"
    case "$planned" in *" $w:1 "*) fail "lab_mems0 worker $w homed on node 1" || return 1 ;; esac
    ! grep -qE "pin pid $w tid [0-9]+ to node 1 " "$WORK/locusd.log" ||
      fail "lab_mems0 worker $w homed on node 1 (the agent's log)" || return 1
    case "$pinned" in
      *" $w:0 "*)
        [ "$(node_of_worker "$w")" = 0 ] || fail "lab_mems0 worker $w pinned to node 0, now on node(s) $(node_of_worker "$w")" || return 1
        homed=$((homed + 1))
        ;;
      *)
        # The agent goes on after the window (on a starved guest its ticks
        # lag the stream by tens of seconds): a pin that came late is in its
        # own record (explain). One landing as we look shows in the worker's
        # CPUs before the record is read back: given a few seconds.
        if [ "$(affinity "$w")" != "$start_cpus" ]; then
          wait_until 15 pinned_home "$w" ||
            fail "lab_mems0 worker $w not pinned to node 0 by Locus, yet its CPUs are $(affinity "$w")" || return 1
        fi
        if pinned_home "$w"; then
          homed=$((homed + 1))
          log "lab_mems0 worker $w pinned to node 0 after the window"
        else
          log "lab_mems0 worker $w not moved yet: it keeps CPUs $start_cpus"
          # A home on node 0 the plan chose in the dry run, not applied yet
          # (a starved guest's ticks lag the stream): the home is what is
          # checked.
          case "$planned" in *" $w:0 "*)
            homed=$((homed + 1))
            log "lab_mems0 worker $w: home node 0 planned (dry run), not applied yet" ;;
          *)
            # Planned before the stream began: on a starved guest the
            # agent's first ticks (its dry run's plan) can precede the
            # watch by a minute; its log has them.
            if grep -qE "pin pid $w tid [0-9]+ to node 0 .*: dry-run" "$WORK/locusd.log"; then
              homed=$((homed + 1))
              log "lab_mems0 worker $w: home node 0 planned (dry run, before the stream began: the agent's log), not applied yet"
            fi ;;
          esac
        fi
        ;;
    esac
    # Its anonymous pages (cpuset.mems places those; a file page it alone
    # maps stays where the process that read it first put it): Locus moves
    # none off node 0, and they stay there. Not all of them: in about one
    # run in three one of its ~160 was on node 1 with no page move by Locus
    # in the stream (the kernel's, not Locus's).
    case "$moved" in *" $w:1 "*) fail "Locus moved worker $w's pages to node 1" || return 1 ;; esac
    share=$(tool pages "$w")
    share=${share#* anon_in_mems=}
    check_ge "worker $w anonymous pages on node 0 (its mems)" "${share%% *}" 0.99 || return 1
  done
  # None yet: on a starved guest the workers' gains may cross min_gain only
  # after the window (the agent came up in 105 s, and its dry run had
  # planned before the stream began).
  if [ "$homed" -eq 0 ] && wait_until 90 any_pinned_home; then
    homed=1
    log "a lab_mems0 worker pinned to node 0 after the window"
  fi
  [ "$homed" -ge 1 ] || fail "no lab_mems0 worker homed on node 0 (pins planned:$planned)" || return 1

  # The first pod moves to node 0 at run time.
  local start
  start=$(now)
  echo 0 >"$CG/lab_node1/cpuset.mems"
  node_cpus 0 >"$CG/lab_node1/cpuset.cpus"
  wait_until 20 grep -q 'lab_node1: homes only on node 0' "$WORK/locusd.log" ||
    fail "the cpuset change was not followed" || return 1
  log "cpuset change followed in $(since "$start") s"
  ctl watch --json --count=10 >"$WORK/watch2.jsonl" 2>>"$WORK/watch.err"
  counted=$(outcomes "$WORK/watch2.jsonl")
  log "actions in the 10 s after: $counted"
  case " $counted " in
    *" FORBIDDEN="* | *" FAILED="*) fail "actions forbidden or failed after the change: $counted" || return 1 ;;
  esac

  # Stopping the agent puts back every affinity it set.
  locusd_stop || fail "locusd exit status $?" || return 1
  for w in $(workers_of lab_mems0); do
    [ "$(affinity "$w")" = "$start_cpus" ] ||
      fail "worker $w affinity $(affinity "$w") not restored to $start_cpus" || return 1
  done
  log "ok: restored on exit"
  kill "$wrk1" "$wrk2" 2>/dev/null
  nginx_in_stop lab_node1
  nginx_in_stop lab_mems0
}

run_scenarios cpusets
