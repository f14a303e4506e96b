#!/bin/bash
# Lab scenario: a server whose workers are threads (issue #29), in one guest
# boot with the lifecycle scenarios (scenario_lifecycle.sh sources this file):
#   haproxy_threads  Debian's haproxy 2.6, master-worker mode, nbthread 4, its
#                    threads all started on node 0: Locus homes two worker
#                    threads on each node and confines them there (the master
#                    left alone). Connections from clients on every CPU (on
#                    loopback a SYN is handled on the connecting CPU), the
#                    thread that served each named in HAProxy's answer
#                    (%[thread]): with the threads placed but steering off
#                    about half reach a thread of the client's node, with
#                    steering >= 99 %. A reload while clients connect loses
#                    none; the new worker process's threads are spread the
#                    same and, two scans after their first accepts, steered
#                    >= 99 %. SIGTERM, and
#                    kill -9 + `locusd --restore`, give every thread back the
#                    CPUs it had and leave no program attached.
# Run inside a guest (tests/lab/guest.sh --forward 80); needs >= 2 nodes.
# Usage: scenario_threads.sh [SCENARIO...]   (default: haproxy_threads)
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -uo pipefail
  # shellcheck source=tests/lab/lib.sh
  . "$(dirname "$0")/lib.sh"
fi

haproxy_pid=

# haproxy_start THREADS: haproxy -W on port 80 (a shard per thread), its
# master's pid in haproxy_pid; every thread starts on node 0.
haproxy_start() {
  cat >"$WORK/haproxy.cfg" <<CFG
global
  nbthread $1
defaults
  mode http
  timeout connect 1s
  timeout client 10s
  timeout server 10s
frontend web
  bind :80 shards by-thread
  http-request return status 200 content-type text/plain lf-string "%[thread]"
CFG
  taskset -c "$(node_cpus 0)" haproxy -W -f "$WORK/haproxy.cfg" \
    >>"$WORK/haproxy.log" 2>&1 &
  haproxy_pid=$!
  wait_until 20 haproxy_worker_ready "$1" ||
    fail "haproxy did not start $1 threads: $(tail -n 3 "$WORK/haproxy.log")"
}
haproxy_stop() {
  [ -n "$haproxy_pid" ] || return 0
  kill -TERM "$haproxy_pid" 2>/dev/null
  wait "$haproxy_pid" 2>/dev/null
  haproxy_pid=
}
# haproxy_worker: the newest worker process of the master.
haproxy_worker() { pgrep -n -P "$haproxy_pid" -x haproxy; }
haproxy_worker_ready() {
  local w
  w=$(haproxy_worker) && [ "$(wc -w <<<"$(threads_of "$w")")" -eq "$1" ]
}

# threads_spread PID: each thread of PID confined to one node, two per node
# on a 2-node guest (as many per node as the spread gives).
threads_spread() {
  local tid n
  declare -A per_node=()
  for tid in $(threads_of "$1"); do
    n=$(nodes_of_cpus "$(affinity "$tid")")
    [[ -n "$n" && "$n" != *,* ]] || return 1
    per_node[$n]=$((${per_node[$n]:-0} + 1))
  done
  [ "${#per_node[@]}" -eq "$(nodes)" ] || return 1
  for n in "${!per_node[@]}"; do
    [ "${per_node[$n]}" -eq $((4 / $(nodes))) ] || return 1
  done
}
# threads_on CPUS PID: every thread of PID allowed exactly CPUS.
threads_on() {
  local tid
  for tid in $(threads_of "$2"); do
    [ "$(affinity "$tid")" = "$1" ] || return 1
  done
}
# threadconns N: N connections from each CPU to port 80, tallied against the
# node of the haproxy worker thread that served each (labtool.py).
threadconns() {
  tool threadconns 80 "$1" "$(cpulist_expand "$(</sys/devices/system/cpu/online)" | paste -sd,)" \
    "$(haproxy_worker)" "$WORK/threadconns.txt"
}
field() { local w; for w in $2; do [[ "$w" == "$1"=* ]] && echo "${w#*=}"; done; }
steered() { ctl status | grep -q ': steered'; }
# no_steering_program: no sk_reuseport program is loaded (one attached to a
# socket group stays loaded while the group lives).
no_steering_program() { ! bpftool prog show 2>/dev/null | grep -q sk_reuseport; }
placement_of() {
  local tid out=""
  for tid in $(threads_of "$1"); do out+=" $tid:$(affinity "$tid")"; done
  echo "${out# }"
}

haproxy_threads() {
  command -v haproxy >/dev/null || fail "haproxy is not installed (deploy/deps.sh lab)" || return 1
  [ "$(nodes)" -eq 2 ] || fail "needs 2 nodes" || return 1
  policy comm=haproxy threads=haproxy irqs=false connections=false
  locusd_ensure || return 1
  policy_apply comm=haproxy threads=haproxy irqs=false connections=false || return 1
  haproxy_start 4 || return 1
  local worker started
  worker=$(haproxy_worker)
  started=$(placement_of "$worker")
  log "haproxy master $haproxy_pid, worker $worker: threads $started"
  load 120 http://127.0.0.1/
  wait_until 30 threads_spread "$worker" ||
    fail "worker threads not two per node in $wait_s s: $(placement_of "$worker")" || return 1
  log "ok: worker threads two per node: $(placement_of "$worker")"
  [ "$(affinity "$haproxy_pid")" = "$(node_cpus 0)" ] ||
    fail "the master was moved: $(affinity "$haproxy_pid")" || return 1
  local roles subject
  roles=$(ctl watch --json --count=1 | tool get tasks.role)
  [[ "$roles" == *TASK_ROLE_WORKER_THREAD* ]] ||
    fail "the agent lists no worker thread: $roles" || return 1
  subject=$(ctl explain "$(threads_of "$worker" | awk '{ print $NF }')" | head -n 1)
  [[ "$subject" == *"haproxy worker thread"* ]] ||
    fail "explain says '$subject'" || return 1
  log "ok: the master stays on node 0; explain: $subject"
  load_stop

  # Each thread's socket (shards by-thread) steered to the thread's node.
  local off on during
  off=$(threadconns 100)
  log "threads placed, steering off: $off"
  policy_apply comm=haproxy threads=haproxy irqs=false connections=true || return 1
  wait_until 20 steered ||
    fail "haproxy's group was not steered: $(ctl status | grep -A3 '^connections')" || return 1
  # Ticks after the attach (counted, not slept: a loaded guest ticks late).
  ctl watch --count=3 >/dev/null || fail "no ticks from locusctl watch" || return 1
  on=$(threadconns 100)
  log "steering on: $on"
  ctl status | grep -A"$(nodes)" '^connections' | sed 's/^/    /'
  check_ge "connections reaching a worker thread of their node" "$(field share "$on")" 0.99 || return 1
  [ "$(field failed "$on")" = 0 ] || fail "failed connections: $on" || return 1
  subject=$(ctl explain "$(threads_of "$worker" | awk '{ print $NF }')" | grep -m1 'listening socket')
  [ -n "$subject" ] || fail "explain of a thread does not name its socket" || return 1
  log "explain: $(sed 's/^ *//' <<<"$subject")"

  # A reload while clients connect: the master starts a new worker process
  # (on node 0, as the master is), whose threads are spread and steered in
  # their turn; no connection fails.
  threadconns 200 >"$WORK/reload.txt" &
  local clients=$!
  sleep 1
  kill -USR2 "$haproxy_pid"
  local reloaded
  reloaded=$(now)
  wait_until 30 bash -c "w=\$(pgrep -n -P $haproxy_pid -x haproxy) && [ \"\$w\" != $worker ]" ||
    fail "no new worker after the reload" || return 1
  wait "$clients"
  during=$(<"$WORK/reload.txt")
  log "connecting across the reload: failed=$(field failed "$during") of $(($(cpulist_expand "$(</sys/devices/system/cpu/online)" | wc -l) * 200))"
  [ "$(field failed "$during")" = 0 ] || fail "connections failed across the reload" || return 1
  worker=$(haproxy_worker)
  wait_until 30 threads_spread "$worker" ||
    fail "new worker's threads not two per node in $wait_s s: $(placement_of "$worker")" || return 1
  log "ok: reload: new worker $worker's threads two per node $(since "$reloaded") s after the reload: $(placement_of "$worker")"
  # Which new thread accepts on which socket is learnt from its first
  # accepts (a few connections), steered two scans on.
  threadconns 5 >/dev/null
  ctl watch --count=2 >/dev/null || fail "no ticks from locusctl watch" || return 1
  on=$(threadconns 100)
  log "new worker, two scans after its first accepts: $on"
  check_ge "connections reaching a new worker thread of their node" "$(field share "$on")" 0.99 ||
    fail "$(ctl status | grep -A"$(nodes)" '^connections')" || return 1

  locusd_stop || fail "locusd exited non-zero on SIGTERM" || return 1
  threads_on "$(node_cpus 0)" "$worker" ||
    fail "after SIGTERM: $(placement_of "$worker"), not $(node_cpus 0) each" || return 1
  no_steering_program || fail "after SIGTERM: $(bpftool prog show | grep -A1 sk_reuseport)" || return 1
  log "ok: SIGTERM gave every thread back CPUs $(node_cpus 0) and left no steering program"
  locusd_start || return 1
  wait_until 30 threads_spread "$worker" ||
    fail "restarted agent: threads not two per node: $(placement_of "$worker")" || return 1
  threadconns 20 >/dev/null
  wait_until 20 steered || fail "restarted agent: haproxy's group not steered" || return 1
  locusd_kill9
  "$LOCUSD" --restore --journal="$WORK/journal" >>"$WORK/locusd.log" 2>&1 ||
    fail "locusd --restore failed: $(tail -n 2 "$WORK/locusd.log")" || return 1
  threads_on "$(node_cpus 0)" "$worker" ||
    fail "after kill -9 and --restore: $(placement_of "$worker")" || return 1
  no_steering_program || fail "after kill -9 and --restore: $(bpftool prog show | grep -A1 sk_reuseport)" || return 1
  log "ok: kill -9 + locusd --restore gave every thread back CPUs $(node_cpus 0) and left no steering program"
  haproxy_stop
  # The lifecycle's scenarios that may follow expect nginx's policy.
  policy
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  [ $# -gt 0 ] || set -- haproxy_threads
  run_scenarios "$@"
fi
