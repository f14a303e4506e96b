#!/bin/bash
# Lab scenario (issue #28; LOCUS_LAB_FULL): numad beside Locus, with a
# worker numad takes on: lab_memhog, 600 MiB and a busy CPU (numad ignores
# processes under 300 MB), as Locus's target, its memory first-touched on
# node 1 and its affinity opened to every CPU, so that Locus pins it.
#   numad_exclude  coexist.numad: exclude (the default): for
#                  LAB_NUMAD_SECONDS (300) numad never takes the worker as a
#                  candidate and its affinity stays as Locus set it.
#   numad_off      coexist.numad: off: numad takes it as a candidate (and the
#                  moves it makes are counted).
# Run inside a guest (tests/lab/guest.sh); needs 2 nodes.
set -uo pipefail
# shellcheck source=tests/lab/lib.sh
. "$(dirname "$0")/lib.sh"

WINDOW=${LAB_NUMAD_SECONDS:-300}

# candidate_lines PID: numad's log lines since this arm that list PID.
candidate_lines() {
  tail -n +"$numad_log_from" /var/log/numad.log | grep -c "PID $1: (lab_memhog)"
}

# managed_worker MODE: Locus with coexist.numad MODE, and a pinned
# lab_memhog (memhog_pid, its affinity in pinned).
managed_worker() {
  sysctl -qw kernel.numa_balancing=0
  policy comm=lab_memhog workers_only=false irqs=false connections=false numad="$1" || return 1
  ln -sf "$LAB_MEMHOG" "$WORK/lab_memhog_prep"
  "$WORK/lab_memhog_prep" --mb=600 --touch_node=1 --run_node=0 --report_ms=0 \
    >"$WORK/memhog.out" 2>"$WORK/memhog.err" &
  memhog_pid=$!
  wait_until 180 grep -q '^ready' "$WORK/memhog.out" ||
    fail "lab_memhog not ready: $(cat "$WORK/memhog.err")" || return 1
  # As an unpinned worker starts: any CPU.
  taskset -a -pc 0-$(($(nproc) - 1)) "$memhog_pid" >/dev/null ||
    fail "taskset $memhog_pid" || return 1
  numad_log_from=$(($(wc -l </var/log/numad.log 2>/dev/null || echo 0) + 1))
  locusd_start --mode=enforce || return 1
  wait_until 60 confined_node "$memhog_pid" >/dev/null ||
    fail "Locus did not pin lab_memhog: $(affinity "$memhog_pid")" || return 1
  pinned=$(affinity "$memhog_pid")
  log "Locus pinned lab_memhog (pid $memhog_pid) to CPUs $pinned (node $(confined_node "$memhog_pid"))"
}

# watch_worker SECONDS: how often lab_memhog's affinity changed after
# Locus's pin (sampled every 5 s), in moves.
watch_worker() {
  local last=$pinned now_cpus i
  moves=0
  for ((i = 0; i < $1; i += 5)); do
    sleep 5
    now_cpus=$(affinity "$memhog_pid")
    if [ "$now_cpus" != "$last" ]; then
      moves=$((moves + 1))
      log "t=$((i + 5)) s: lab_memhog moved from CPUs $last to $now_cpus"
      last=$now_cpus
    fi
  done
}

numad_exclude() {
  numad -i 5 -l 6 >"$WORK/numad.out" 2>&1 ||
    fail "numad did not start: $(cat "$WORK/numad.out")" || return 1
  managed_worker exclude || return 1
  wait_until 30 test "$(ctl status --json | "$PY" -c '
import json, sys
n = {x["name"]: x for x in json.load(sys.stdin).get("neighbours", [])}
print(" ".join(map(str, n.get("numad", {}).get("pids_excluded", []))))')" = "$memhog_pid" ||
    fail "lab_memhog is not on numad's exclusion list: $(ctl status | grep numad)" || return 1
  numad_log_from=$(($(wc -l </var/log/numad.log) + 1))
  watch_worker "$WINDOW"
  local seen
  seen=$(candidate_lines "$memhog_pid")
  log "coexist.numad exclude, ${WINDOW} s: numad listed lab_memhog as a candidate $seen time(s); it moved $moves time(s)"
  check_le "times numad took the excluded worker as a candidate" "$seen" 0 || return 1
  check_le "moves of the excluded worker after Locus's pin" "$moves" 0 || return 1
  memhog_stop
  locusd_stop || fail "locusd exited non-zero on SIGTERM" || return 1
}

numad_off() {
  managed_worker off || return 1
  watch_worker "$WINDOW"
  local seen
  seen=$(candidate_lines "$memhog_pid")
  log "coexist.numad off, ${WINDOW} s: numad listed lab_memhog as a candidate $seen time(s); it moved $moves time(s)"
  check_ge "times numad took the worker as a candidate" "$seen" 1 || return 1
  memhog_stop
  locusd_stop || fail "locusd exited non-zero on SIGTERM" || return 1
  kill "$(cat /run/numad.pid)" 2>/dev/null
}

run_scenarios numad_exclude numad_off
