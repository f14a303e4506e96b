# shellcheck shell=bash
# Shared by the lab scenarios (sourced, inside a guest started by guest.sh).
#
# The scenarios drive nginx, wrk, numactl, lab_memhog and locusd, read what
# the agent did with `locusctl status/watch/explain`, and check the host
# itself (/proc/PID/pagemap, smp_affinity_list, tracefs, /proc/softirqs)
# through labtool.py. Every check prints the figure it asserted on.
#
# Binaries come from the environment (ctest passes them): LOCUSD, LOCUSCTL,
# LAB_MEMHOG, LAB_TP_HOLD; they default to the build tree next to this source tree.

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_BUILD=${LOCUS_BUILD_DIR:-$LAB_DIR/../../build}
LOCUSD=${LOCUSD:-$LAB_BUILD/agent/main/locusd}
LOCUSCTL=${LOCUSCTL:-$LAB_BUILD/agent/ctl/locusctl}
LAB_MEMHOG=${LAB_MEMHOG:-$LAB_BUILD/tests/bench/lab_memhog}
LAB_TP_HOLD=${LAB_TP_HOLD:-$LAB_BUILD/tests/bench/locus_bench_empty}
PY=/usr/bin/python3
WORK=/run/lab
SOCK=$WORK/locusd.sock
POLICY=$WORK/policy.yaml
mkdir -p "$WORK"

lab_failures=0
lab_passed=()
lab_failed=()
locusd_pid=
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

# Time in centiseconds since boot, without starting a process (under TCG
# every exec costs a good part of a second).
now() {
  local up _
  read -r up _ </proc/uptime
  echo "${up/./}"
}
# since START: seconds from START (a `now` reading) to now, as 12.34.
since() {
  local d=$(($(now) - $1))
  printf '%d.%02d' $((d / 100)) $((d % 100))
}
log() { echo "  $*"; }
tool() { "$PY" "$LAB_DIR/labtool.py" "$@"; }
# shellcheck source=tests/lab/tp_hold.sh
. "$LAB_DIR/tp_hold.sh"
# One call's deadline, stretched as waits are (see wait_until): locusctl's
# default of 5 s is an answer's on real CPUs, and an experiment's start
# waits up to three of the agent's ticks for the arms to be drawn.
ctl() { "$LOCUSCTL" --socket="$SOCK" --timeout=$((5 * LAB_WAIT_SCALE)) "$@"; }

# fail MESSAGE: prints the failed assertion; the scenario returns 1.
fail() {
  echo "  FAIL: $*"
  return 1
}

# check_ge WHAT VALUE MIN / check_le WHAT VALUE MAX: a figure and its bound.
check_ge() {
  if [ "$(echo "$2 >= $3" | bc)" = 1 ]; then
    log "ok: $1 = $2 (>= $3)"
  else
    fail "$1 = $2, expected >= $3"
  fi
}
check_le() {
  if [ "$(echo "$2 <= $3" | bc)" = 1 ]; then
    log "ok: $1 = $2 (<= $3)"
  else
    fail "$1 = $2, expected <= $3"
  fi
}

# wait_until SECONDS COMMAND...: polls COMMAND every half second, for up to
# SECONDS times LAB_WAIT_SCALE (its bound in wait_s, for a message). A wait's
# bound guards against a hang and is no claim (claims count ticks and
# shares): a guest under TCG beside a busy host runs several times slower
# than beside an idle one, and CI's host is both busier and slower than a
# developer's, where a bound of a third of this was met.
LAB_WAIT_SCALE=${LAB_WAIT_SCALE:-3}
wait_s=0
wait_until() {
  wait_s=$(($1 * LAB_WAIT_SCALE))
  local deadline=$(($(now) + wait_s * 100))
  shift
  until "$@"; do
    [ "$(now)" -gt "$deadline" ] && return 1
    sleep 0.5
  done
}

# watch_started OUT ERR: waits for the first message of a `ctl watch` whose
# output is OUT and errors ERR. Under emulation beside a busy host its start
# can take tens of seconds, as the agent's own can (locusd_start's 90).
watch_started() {
  wait_until 90 test -s "$1" && return 0
  fail "no metrics from locusctl watch within $wait_s s: $(tail -c 300 "$2" 2>/dev/null)"
}

# Runs each scenario function, reports each, and fails if any failed; a
# failed scenario does not stop the next one.
run_scenarios() {
  local s start
  for s in "$@"; do
    echo "=== $s ($(uname -r), $(nodes) nodes, node 0 CPUs $(node_cpus 0))"
    start=$(now)
    if "$s"; then
      echo "PASS $s ($(since "$start") s)"
      lab_passed+=("$s")
    else
      echo "FAIL $s ($(since "$start") s)"
      lab_failed+=("$s")
      lab_failures=$((lab_failures + 1))
      if [ -s "$WORK/locusd.log" ]; then
        echo "  --- locusd log (last lines)"
        tail -n 15 "$WORK/locusd.log" | cut -c1-300 | sed 's/^/  /'
      fi
    fi
    # LAB_ARTIFACTS (a directory shared with guest.sh --share): keep the
    # logs of every scenario for a look afterwards.
    if [ -n "${LAB_ARTIFACTS:-}" ]; then
      mkdir -p "$LAB_ARTIFACTS/$s"
      cp "$WORK"/*.log "$WORK"/*.jsonl "$WORK"/*.txt "$WORK"/*.err "$LAB_ARTIFACTS/$s/" 2>/dev/null
    fi
    # The next scenario starts from a quiet machine; the agent keeps running.
    load_stop
    memhog_stop
    hog_stop
    nginx_stop
  done
  lab_cleanup
  echo "=== passed: ${lab_passed[*]:-none}; failed: ${lab_failed[*]:-none}"
  [ "$lab_failures" -eq 0 ]
}

# --- the machine -----------------------------------------------------------

nodes() {
  local all=(/sys/devices/system/node/node[0-9]*)
  echo "${#all[@]}"
}
node_cpus() { echo "$(<"/sys/devices/system/node/node$1/cpulist")"; }
cpulist_expand() {
  local part lo hi i
  for part in ${1//,/ }; do
    lo=${part%-*}
    hi=${part#*-}
    for ((i = lo; i <= hi; i++)); do echo "$i"; done
  done
}
# The holders run until the guest powers off.
tracepoints_hold "$LAB_TP_HOLD" "$WORK" || exit 1
declare -A CPU_NODE
for node_dir in /sys/devices/system/node/node[0-9]*; do
  for cpu in $(cpulist_expand "$(<"$node_dir/cpulist")"); do
    CPU_NODE[$cpu]=${node_dir##*node}
  done
done
# The nodes of the CPUs in a cpulist, as "0" or "0,1".
nodes_of_cpus() {
  local cpu seen=""
  for cpu in $(cpulist_expand "$1"); do
    [[ ",$seen," == *",${CPU_NODE[$cpu]},"* ]] || seen+=${seen:+,}${CPU_NODE[$cpu]}
  done
  echo "$seen"
}
# affinity TID: its allowed CPUs, read without starting a process.
# The file is read whole, in one read(2): bash's `read` takes a line at a
# time and seeks back, and /proc/PID/status is generated afresh on each read,
# so while its pages migrate (VmRSS changing length) a line-by-line read
# came out shifted and missed the key (a worker "on node ''").
affinity() {
  local status
  status=$(<"/proc/$1/status") || return
  status=${status#*Cpus_allowed_list:}
  status=${status%%$'\n'*}
  echo "${status//[[:space:]]/}"
}
threads_of() {
  local tasks=("/proc/$1/task/"*)
  [ -e "${tasks[0]}" ] && echo "${tasks[@]##*/}"
}

# The guest NIC's queue IRQs: "IRQ NAME" lines (virtioN-input.0, -output.0).
nic_irqs() {
  local dev
  dev=$(basename "$(readlink -f "/sys/class/net/$LAB_NIC/device")")
  grep -E " ${dev}-(input|output)\." /proc/interrupts |
    awk '{ sub(":", "", $1); print $1, $NF }'
}
nic_rx_irq() { nic_irqs | awk '/input/ { print $1; exit }'; }
irq_cpus() { echo "$(</proc/irq/$1/smp_affinity_list)"; }
# nic_irq_cpus [IRQ...]: "IRQ CPUS" a line for these IRQs (default: the NIC's
# queue IRQs), with no process started per IRQ (each costs seconds under TCG).
nic_irq_cpus() {
  local irq
  [ $# -gt 0 ] || set -- $(nic_irqs | awk '{ print $1 }')
  for irq in "$@"; do echo "$irq $(irq_cpus "$irq")"; done
}

# NET_RX softirqs per CPU, from /proc/softirqs, space separated.
net_rx_counts() { awk '$1 == "NET_RX:" { $1 = ""; print }' /proc/softirqs; }
# share_on_cpus BEFORE AFTER CPULIST: the share of the NET_RX softirqs
# between two net_rx_counts readings that ran on CPULIST.
share_on_cpus() {
  local -a before=($1) after=($2)
  local total=0 on=0 cpu d
  for cpu in "${!after[@]}"; do
    d=$((after[cpu] - before[cpu]))
    total=$((total + d))
    if cpulist_expand "$3" | grep -qx "$cpu"; then on=$((on + d)); fi
  done
  [ "$total" -gt 0 ] || { echo 0; return; }
  echo "scale=3; $on / $total" | bc
}

# --- nginx -----------------------------------------------------------------

# nginx_start WORKERS [COMMAND PREFIX...]: nginx with WORKERS workers,
# started through the prefix (e.g. numactl --cpunodebind=1). Each worker
# allocates and touches its connection table at start (65536 connections,
# about 28 MiB): memory first-touched where it starts, its own.
nginx_start() {
  local workers=$1
  shift
  cat >"$WORK/nginx.conf" <<EOF
worker_processes $workers;
worker_rlimit_nofile 70000;
pid $WORK/nginx.pid;
error_log $WORK/nginx.err warn;
events { worker_connections 65536; }
http {
  access_log off;
  server { listen 80; location / { return 200 "ok\n"; } }
}
EOF
  "$@" "$nginx_bin" -e "$WORK/nginx.err" -c "$WORK/nginx.conf" || return 1
  wait_until 30 nginx_has_workers "$workers" ||
    fail "nginx did not start $workers workers: $(tail -n 3 "$WORK/nginx.err")"
}
nginx_master() { cat "$WORK/nginx.pid" 2>/dev/null; }
nginx_workers() {
  local master
  master=$(nginx_master) || return 0
  [ -n "$master" ] && pgrep -P "$master" -f 'nginx: worker' | sort -n
}
nginx_has_workers() { [ "$(nginx_workers | wc -l)" -eq "$1" ]; }
nginx_stop() {
  local master
  master=$(nginx_master)
  [ -n "$master" ] || return 0
  "$nginx_bin" -e "$WORK/nginx.err" -c "$WORK/nginx.conf" -s stop 2>/dev/null
  wait_until 20 bash -c "! kill -0 $master 2>/dev/null"
  rm -f "$WORK/nginx.pid"
}

# nginx_reuseport WORKERS PORT [MAIN_DIRECTIVE]: nginx listening with
# `reuseport` on 127.0.0.1:PORT, logging each request's worker and path
# ($pid $request_uri) to $WORK/access.txt (labtool.py conns joins them).
nginx_reuseport() {
  cat >"$WORK/nginx.conf" <<CONF
worker_processes $1;
${3:-}
pid $WORK/nginx.pid;
error_log $WORK/nginx.err warn;
events { worker_connections 4096; }
http {
  log_format steer '\$pid \$request_uri';
  access_log $WORK/access.txt steer;
  server { listen 127.0.0.1:$2 reuseport; location / { return 200 "ok\n"; } }
}
CONF
  "$nginx_bin" -e "$WORK/nginx.err" -c "$WORK/nginx.conf" || return 1
  wait_until 30 nginx_has_workers "$1" ||
    fail "nginx did not start $1 workers: $(tail -n 3 "$WORK/nginx.err")"
}
# Every nginx worker confined to one node, as many on each node as it has CPUs.
workers_one_per_cpu() {
  local w n per=()
  for w in $(nginx_workers); do
    n=$(confined_node "$w") || return 1
    per[n]=$((${per[n]:-0} + 1))
  done
  for n in $(seq 0 $(($(nodes) - 1))); do
    [ "${per[n]:-0}" -eq "$(cpulist_expand "$(node_cpus "$n")" | wc -l)" ] || return 1
  done
}
# start_on_node NODE PID...: every thread of each PID on NODE's CPUs, before
# the agent starts: a worker homed elsewhere then gains all its time from a
# pin, whatever the machine's load (one that ran at home by chance gained
# too little to be pinned, below min_gain).
start_on_node() {
  local cpus pid
  cpus=$(node_cpus "$1")
  shift
  for pid in "$@"; do taskset -a -pc "$cpus" "$pid" >/dev/null; done
}
# warm_until_placed PORT CPUS: connections from CPUS until the agent has
# placed the workers one per CPU (placement acts on workers that run). Every
# worker starts on node 0: the spread moves the other nodes' share of them
# away, and those it keeps there are confined already. Left free, a worker that happened to
# run on its home node gained too little from a pin to be pinned, and was
# never read as placed (lab_connections_6.1 failed so in 2 of its last 3 runs
# here, passing on the retry).
warm_until_placed() {
  local i
  start_on_node 0 $(nginx_workers)
  for i in $(seq 1 30); do
    tool conns "$1" 20 "$2" "$WORK/access.txt" >/dev/null
    workers_one_per_cpu && return 0
  done
  fail "workers not placed one per CPU: $(for w in $(nginx_workers); do echo -n "$w:$(affinity "$w") "; done)"
}

# load SECONDS URL [taskset CPUs]: wrk in the background; its pid in $load_pid.
load() {
  local cpus=${3:-}
  local prefix=()
  [ -n "$cpus" ] && prefix=(taskset -c "$cpus")
  "${prefix[@]}" wrk -t1 -c16 -d"$1"s "$2" >"$WORK/wrk.out" 2>&1 &
  load_pid=$!
}
load_stop() {
  [ -n "${load_pid:-}" ] && kill "$load_pid" 2>/dev/null
  wait "${load_pid:-}" 2>/dev/null
  load_pid=
}

# --- locusd ------------------------------------------------------------------

# policy [KEY=VALUE...]: writes tests/lab/policy.yaml with these overrides
# of its "rewritten" lines: comm=LIST (the flow list's body), workers_only=BOOL,
# cpus=CPULIST (placement), irqs=BOOL (IRQ steering), connections=BOOL
# (connection steering), spill=SHARE (connections.spill_above_busy),
# numad=exclude|off (coexist.numad), softhome=BOOL (placement.spill.enabled).
policy() {
  local kv comm=nginx workers_only=true threads="" cpus="" irqs=true connections=true spill=0.85 numad=exclude softhome=false
  for kv in "$@"; do
    case "$kv" in
      comm=*) comm=${kv#comm=} ;;
      workers_only=*) workers_only=${kv#workers_only=} ;;
      threads=*) threads=${kv#threads=} ;;
      cpus=*) cpus=${kv#cpus=} ;;
      irqs=*) irqs=${kv#irqs=} ;;
      connections=*) connections=${kv#connections=} ;;
      spill=*) spill=${kv#spill=} ;;
      numad=*) numad=${kv#numad=} ;;
      softhome=*) softhome=${kv#softhome=} ;;
      *) fail "policy: unknown override $kv"; return 1 ;;
    esac
  done
  sed -e "s/^\(  comm:\).*# rewritten: comm\$/\1 [$comm]/" \
      -e "s/^\(  workers_only:\).*# rewritten: workers_only\$/\1 $workers_only/" \
      -e "s/^\(  thread_workers:\).*# rewritten: threads\$/\1 [$threads]/" \
      -e "s/^\(  cpus:\).*# rewritten: cpus\$/\1 \"$cpus\"/" \
      -e "s/^\(  enabled:\).*# rewritten: irqs\$/\1 $irqs/" \
      -e "s/^\(  enabled:\).*# rewritten: connections\$/\1 $connections/" \
      -e "s/^\(  spill_above_busy:\).*# rewritten: spill\$/\1 $spill/" \
      -e "s/^\(  numad:\).*# rewritten: numad\$/\1 $numad/" \
      -e "s/^\(    enabled:\).*# rewritten: softhome\$/\1 $softhome/" \
      "$LAB_DIR/policy.yaml" >"$POLICY.tmp"
  mv "$POLICY.tmp" "$POLICY"
}
policy_version() { ctl status --json | tool get policy.version; }
# policy_apply [KEY=VALUE...]: rewrites the policy and waits for the agent
# to load it.
policy_apply() {
  local before old=""
  before=$(policy_version)
  [ -f "$POLICY" ] && old=$(<"$POLICY")
  policy "$@" || return 1
  [ "$old" = "$(<"$POLICY")" ] && return 0 # unchanged: nothing to reload
  wait_until 20 policy_newer_than "$before" || fail "policy not reloaded"
}
policy_newer_than() { [ "$(policy_version)" -gt "$1" ] 2>/dev/null; }

# locusd_start [FLAGS...]: starts the agent and waits until it answers.
locusd_start() {
  [ -f "$POLICY" ] || policy
  "$LOCUSD" --policy="$POLICY" --socket="$SOCK" --journal="$WORK/journal" \
    "$@" >>"$WORK/locusd.log" 2>&1 &
  locusd_pid=$!
  local start
  start=$(now)
  if ! wait_until 90 ctl status >/dev/null 2>&1; then
    fail "locusd did not answer within $wait_s s"
    return 1
  fi
  log "locusd up in $(since "$start") s"
}
locusd_running() { [ -n "$locusd_pid" ] && kill -0 "$locusd_pid" 2>/dev/null; }
locusd_ensure() { locusd_running || locusd_start; }
locusd_stop() {
  [ -n "$locusd_pid" ] || return 0
  kill -TERM "$locusd_pid" 2>/dev/null
  wait "$locusd_pid"
  local rc=$?
  locusd_pid=
  return $rc
}
locusd_kill9() {
  kill -KILL "$locusd_pid" 2>/dev/null
  wait "$locusd_pid" 2>/dev/null
  locusd_pid=
}
# Every BPF sensor loaded on this kernel and reporting; the NUMA-fault
# sensor may be idle only when kernel.numa_balancing=0 (no hinting faults).
sensors_up() {
  local json names sources oks
  json=$(ctl status --json) || fail "locusctl status" || return 1
  read -r -a names <<<"$(tool get sensors.sensor <<<"$json")"
  read -r -a sources <<<"$(tool get sensors.source <<<"$json")"
  read -r -a oks <<<"$(tool get sensors.ok <<<"$json")"
  log "sensors: ${names[*]} sources: ${sources[*]} ok: ${oks[*]}"
  [ "${#names[@]}" -gt 0 ] || fail "no sensors in status" || return 1
  local i balancing
  balancing=$(</proc/sys/kernel/numa_balancing)
  for i in "${!names[@]}"; do
    [ "${sources[i]}" != none ] || fail "sensor ${names[i]} has no source" || return 1
    [ "${oks[i]}" = True ] && continue
    [ "${names[i]}" = numa_faults ] && [ "$balancing" = 0 ] && continue
    fail "sensor ${names[i]} (${sources[i]}) is down" || return 1
  done
}

# confined_to_node PID: every thread of PID may run on one node only; prints it.
confined_node() {
  local tid n seen=""
  for tid in $(threads_of "$1"); do
    n=$(nodes_of_cpus "$(affinity "$tid")")
    [[ "$n" == *,* || -z "$n" ]] && return 1
    [ -z "$seen" ] || [ "$seen" = "$n" ] || return 1
    seen=$n
  done
  echo "$seen"
}

memhog_stop() {
  [ -n "${memhog_pid:-}" ] || return 0
  kill "$memhog_pid" 2>/dev/null
  wait "$memhog_pid" 2>/dev/null
  memhog_pid=
}

hog_pids=()
# hog_start NODE [PER_CPU] / hog_stop: PER_CPU busy loops (default 1) bound
# to each CPU of NODE.
hog_start() {
  local cpu i
  for cpu in $(cpulist_expand "$(node_cpus "$1")"); do
    for i in $(seq "${2:-1}"); do
      taskset -c "$cpu" bash -c 'while :; do :; done' &
      hog_pids+=($!)
    done
  done
}
hog_stop() {
  [ "${#hog_pids[@]}" -gt 0 ] || return 0
  kill "${hog_pids[@]}" 2>/dev/null
  wait "${hog_pids[@]}" 2>/dev/null
  hog_pids=()
}

lab_cleanup() {
  load_stop
  memhog_stop
  hog_stop
  nginx_stop
  if [ -n "$locusd_pid" ]; then
    locusd_stop
  fi
  true
}
