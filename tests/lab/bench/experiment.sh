#!/bin/bash
# The experiment's figures in a 2-node lab guest (a script, not a ctest):
# tests/lab/scenario_experiment.sh's `ab` and `aa` with longer runs, plus
# the control loop's CPU time per tick before and during an experiment.
# Run as root after building locusd, locusctl and locus_bench_empty:
#
#   tests/lab/bench/experiment.sh [BUILD_DIR] [DURATION] [AA_DURATION]
#                                             (build, 5m, 5m)
#
# Prints, from inside the guest: each experiment's status and verdict, the
# per-arm bytes and CPU seconds against nginx's access log and
# /proc/PID/schedstat, the A/A interval and its noise (`labtool.py noise`:
# the per-interval and per-worker standard deviations of log work per
# CPU-second that tests/policy/experiment_power takes), and
# "tick_cpu_ms before=... during=..." (mean of 10 ticks each).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
duration=${2:-5m}
aa=${3:-5m}
export EXPERIMENT_DURATION=$duration AA_DURATION=$aa EXPERIMENT_COST=1
export LOCUSD=$build/agent/main/locusd LOCUSCTL=$build/agent/ctl/locusctl
export LAB_TP_HOLD=$build/tests/bench/locus_bench_empty LOCUS_BUILD_DIR=$build
exec "$here/../guest.sh" --tcg single --kernel 6.1 --nodes 2 --cpus-per-node 2 \
  --mem 2048 --timeout 3600 --build "$build" -- \
  "$here/../scenario_experiment.sh" ab aa
