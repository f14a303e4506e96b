#!/bin/bash
# One case of the convergence benchmark, run INSIDE a lab guest (as root) by
# converge.sh, which documents the benchmark as a whole:
#
#   case.sh TOOL WORKLOAD BUILD_DIR OUT_PREFIX
#
# TOOL      none            numa_balancing=0, nothing else
#           autonuma        numa_balancing=1 (the kernel alone)
#           numad           numa_balancing=0, numad -i 5
#           irqbalance      numa_balancing=0, irqbalance --foreground
#           locus           numa_balancing=0, locusd (enforce, tick BENCH_TICK)
#           locus_autonuma  numa_balancing=1, locusd
#           locus_1mover    numa_balancing=0, locusd --page_movers=1 (one
#                           process moved at a time, for the comparison)
# WORKLOAD  memhog200, memhog600  lab_memhog --mb=200|600, first-touched on
#             node 1, then running on node 0
#           memhog4x150  four lab_memhog --mb=150, the same way (local share
#             over all four)
#           nginx  2 nginx workers and wrk on node 1 (taskset), wrk going
#             through the NIC (10.0.2.2:LAB_FWD_80, forwarded back into the
#             guest); the NIC's queue IRQs (virtio input and output) set
#             to node 0's first CPU before the tool starts
#
# The tool starts first (locusd: until locusctl gets an answer), then the
# workload. The clock starts when the misplacement is there: lab_memhog
# printed "ready", or nginx's master started (the tool may act as soon as its
# workers appear; wrk follows them). lab_sampler watches the workload every
# BENCH_PERIOD_MS (150) for BENCH_SECONDS (30)
# and writes OUT_PREFIX.csv (columns in tests/lab/bench/sampler_main.cc):
# local share = the memhog's pages on the node it runs on, or NET_RX
# softirqs on the nginx workers' node over the last second. Tool logs go to
# OUT_PREFIX.TOOL.log. Under locusd, its metrics stream (locusctl watch
# --json: each tick's duration and pages moved) goes to OUT_PREFIX.stream.json;
# after the memhog600 run under locusd alone, the same guest measures the
# single-threaded move_pages ceiling for 600 MiB (move_ceiling.py --ceiling)
# into OUT_PREFIX.ceiling.txt.
set -uo pipefail

[ $# -eq 4 ] || { echo "usage: $0 TOOL WORKLOAD BUILD_DIR OUT_PREFIX" >&2; exit 2; }
tool=$1 workload=$2 build=$3 out=$4
here=$(cd "$(dirname "$0")" && pwd)
seconds=${BENCH_SECONDS:-30}
period_ms=${BENCH_PERIOD_MS:-150}
tick=${BENCH_TICK:-250ms}
locusd=$build/agent/main/locusd
locusctl=$build/agent/ctl/locusctl
memhog=$build/tests/bench/lab_memhog
sampler=$build/tests/bench/lab_sampler
tp_hold=$build/tests/bench/locus_bench_empty
work=$(mktemp -d /tmp/bench.XXXXXX)
socket=/run/locus/bench.sock

die() { echo "case.sh [$tool $workload]: $*" >&2; exit 1; }
note() { echo "case.sh [$tool $workload]: $*" >&2; }
# shellcheck source=tests/lab/tp_hold.sh
. "$here/../tp_hold.sh"

node0_cpus=$(cat /sys/devices/system/node/node0/cpulist)
node1_cpus=$(cat /sys/devices/system/node/node1/cpulist 2>/dev/null) ||
  die "needs a guest with 2 nodes"

# --- the tool -------------------------------------------------------------
tool_pid=
start_tool() {
  local balancing=0
  case $tool in autonuma | locus_autonuma) balancing=1 ;; esac
  echo "$balancing" >/proc/sys/kernel/numa_balancing || die "cannot set numa_balancing"
  case $tool in
    none | autonuma) ;;
    numad)
      numad -i 5 || die "numad did not start"
      ;;
    irqbalance)
      irqbalance --foreground >"$out.irqbalance.log" 2>&1 &
      tool_pid=$!
      ;;
    locus | locus_autonuma | locus_1mover)
      local policy=$work/policy.yaml movers=()
      [ "$tool" = locus_1mover ] && movers=(--page_movers=1)
      local name=${workload%%[0-9]*}
      [ "$workload" = memhog4x150 ] && name=memhog4x
      sed "s/@NODE1_CPUS@/$node1_cpus/; s/@NODE0_CPUS@/$node0_cpus/" \
        "$here/policy_$name.yaml" >"$policy"
      "$locusd" --policy="$policy" --socket="$socket" --journal="$work/journal" \
        --mode=enforce --tick="$tick" "${movers[@]}" >"$out.locusd.log" 2>&1 &
      tool_pid=$!
      # Bounded in seconds, not tries: each exec costs up to a second here.
      local deadline=$((SECONDS + 90))
      while ((SECONDS < deadline)); do
        if "$locusctl" --socket="$socket" status >/dev/null 2>&1; then
          "$locusctl" --socket="$socket" watch --json >"$out.stream.json" 2>/dev/null &
          watch_pid=$!
          return 0
        fi
        kill -0 "$tool_pid" 2>/dev/null || die "locusd exited: $(tail -n 5 "$out.locusd.log")"
        sleep 0.1
      done
      die "locusd did not answer within 90 s: $(tail -n 3 "$out.locusd.log")"
      ;;
    *) die "unknown tool $tool" ;;
  esac
}

watch_pid=
stop_tool() {
  [ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null
  case $tool in
    numad) numad -i 0 >/dev/null 2>&1; cp /var/log/numad.log "$out.numad.log" 2>/dev/null ;;
    *) [ -n "$tool_pid" ] && kill "$tool_pid" 2>/dev/null && wait "$tool_pid" 2>/dev/null ;;
  esac
  return 0
}

# --- the workload ---------------------------------------------------------
irqs=()      # the NIC's queue IRQs (nginx)
workload_pids=()
wrk_pid=
start_workload() {
  case $workload in
    memhog4x150) start_memhogs 4 150 ;;
    memhog*)
      local mb=${workload#memhog} line
      # Confined to node 1 from exec, and started under another name (it
      # names itself lab_memhog when ready): a tool that selects it by name
      # sees it first when the misplacement is there, not while it sets up
      # (Locus would act on its first few pages; their move's dwell then
      # held its memory where it was).
      ln -s "$memhog" "$work/lab_memhog_prep"
      coproc MEMHOG {
        exec taskset -c "$node1_cpus" "$work/lab_memhog_prep" --mb="$mb" \
          --touch_node=1 --run_node=0 --report_ms=0
      }
      workload_pids+=("$MEMHOG_PID")
      start_sampler --pids="$MEMHOG_PID"
      read -r -t 600 line <&"${MEMHOG[0]}"
      [ "$line" = ready ] || die "lab_memhog did not report ready"
      echo go >&"$sampler_in"
      ;;
    nginx)
      mkdir -p "$work/html" "$work/logs"
      head -c 612 /dev/zero | tr '\0' x >"$work/html/index.html"
      cat >"$work/nginx.conf" <<CONF
daemon off;
worker_processes 2;
pid $work/nginx.pid;
error_log $work/logs/error.log warn;
events { worker_connections 1024; }
http { access_log off; server { listen 80; root $work/html; } }
CONF
      # nginx starts and the clock starts together: the sampler watches the
      # children of a launcher that execs nginx (so keeps its pid) on cue.
      mkfifo "$work/launch"
      (read -r _ <"$work/launch" &&
        exec taskset -c "$node1_cpus" nginx -p "$work" -c "$work/nginx.conf") &
      workload_pids+=($!)
      start_sampler --children_of="${workload_pids[0]}"
      exec {launch}>"$work/launch"
      echo go >&"$sampler_in"
      echo go >&"$launch"
      local workers=() deadline=$((SECONDS + 60))
      while ((SECONDS < deadline)); do
        mapfile -t workers < <(pgrep -P "${workload_pids[0]}")
        [ ${#workers[@]} -ge 2 ] && break
        sleep 0.1
      done
      [ ${#workers[@]} -ge 2 ] || die "nginx workers did not start"
      taskset -c "$node1_cpus" wrk -t1 -c16 -d"$((seconds - 2))s" \
        "http://${LAB_HOST_ADDR:-10.0.2.2}:$LAB_FWD_80/" >"$out.wrk.log" 2>&1 &
      wrk_pid=$!
      workload_pids+=("$wrk_pid")
      ;;
    *) die "unknown workload $workload" ;;
  esac
}

# N lab_memhog of MB MiB each, as memhog* above but with their output in
# files (bash has one coprocess at a time); the clock starts when all four
# are ready.
start_memhogs() {
  local n=$1 mb=$2 i pids=()
  ln -s "$memhog" "$work/lab_memhog_prep"
  for ((i = 0; i < n; i++)); do
    taskset -c "$node1_cpus" "$work/lab_memhog_prep" --mb="$mb" --touch_node=1 \
      --run_node=0 --report_ms=0 --wait_for="$work/go" >"$work/hog$i.out" &
    pids+=($!)
  done
  workload_pids+=("${pids[@]}")
  start_sampler --pids="$(IFS=,; echo "${pids[*]}")"
  # All touched, then all go to node 0 and take their name together: a tool
  # sees the four misplaced at once, not the first ready while the others
  # still touch (the runs would not start alike).
  wait_lines touched "$n"
  touch "$work/go"
  wait_lines ready "$n"
  echo go >&"$sampler_in"
}

# wait_lines LINE N: until each of hog0..hogN-1's output has LINE.
wait_lines() {
  local line=$1 n=$2 i deadline=$((SECONDS + 600))
  for ((i = 0; i < n; i++)); do
    until grep -qx "$line" "$work/hog$i.out" 2>/dev/null; do
      ((SECONDS < deadline)) || die "lab_memhog $i did not report $line"
      sleep 0.1
    done
  done
}

# lab_sampler, started and ready before the workload is in place (a process
# start takes a good fraction of a second in the emulated guest), then told
# when to start its clock.
sampler_pid=
start_sampler() {
  local args=("$1" --period_ms="$period_ms" --seconds="$seconds" --start_on_stdin)
  [ ${#irqs[@]} -gt 0 ] && args+=(--irqs="$(IFS=,; echo "${irqs[*]}")")
  mkfifo "$work/start"
  "$sampler" "${args[@]}" <"$work/start" >"$out.csv" &
  sampler_pid=$!
  exec {sampler_in}>"$work/start"
  # Its header is out once it is ready to take the first sample.
  local deadline=$((SECONDS + 60))
  while ((SECONDS < deadline)); do
    [ -s "$out.csv" ] && return 0
    sleep 0.05
  done
  die "lab_sampler did not start"
}

stop_workload() {
  local p
  for p in "${workload_pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${workload_pids[@]}"; do wait "$p" 2>/dev/null; done
  return 0
}

cleanup() {
  stop_workload
  stop_tool
  local p
  for p in "${tp_hold_pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT

# In every tool's run, as in the lab's scenarios (see tp_hold.sh).
tracepoints_hold "$tp_hold" "$work" || die "the sensors' tracepoints are not held"

if [ "$workload" = nginx ]; then
  # The NIC's queue IRQs on node 0, before any tool runs (a tool that finds
  # them moved later would take it for someone else's decision).
  [ -n "${LAB_FWD_80:-}" ] || die "needs guest.sh --forward 80"
  mapfile -t irqs < <(awk -F: '/virtio[0-9]+-(input|output)\.[0-9]+/ { print $1 + 0 }' /proc/interrupts)
  [ ${#irqs[@]} -gt 0 ] || die "no virtio-net queue IRQs in /proc/interrupts"
  for irq in "${irqs[@]}"; do
    echo "${node0_cpus%%[-,]*}" >"/proc/irq/$irq/smp_affinity_list" ||
      die "cannot set IRQ $irq's affinity"
  done
fi
start_tool
start_workload
note "workload in place; sampling for $seconds s"
wait "$sampler_pid" || die "lab_sampler failed"
if [ -n "$wrk_pid" ]; then
  wait "$wrk_pid"
  note "wrk: $(grep -h 'Requests/sec' "$out.wrk.log")"
fi
if [ "$tool $workload" = "locus memhog600" ]; then
  stop_workload
  stop_tool
  note "the move_pages ceiling in this guest"
  "$here/move_ceiling.py" "$build" 600 --ceiling >"$out.ceiling.txt" ||
    die "move_ceiling.py failed"
fi
exit 0
