#!/bin/bash
# Connection steering, side by side (a script, not a ctest): in one 2-node
# lab guest (2 x 2 CPUs, TCG) per kernel, nginx with a worker per CPU and
# `reuseport`, without an agent, with Locus placing the workers only, and
# with Locus steering connections too (connections_case.sh says how each is
# measured). Prints a table; run as root after building locusd and locusctl:
#
#   tests/lab/bench/connections.sh [BUILD_DIR]          (build)
#
# Env: BENCH_KERNELS ("6.1"; e.g. "6.1 6.12"), BENCH_CONNS (200 per CPU),
# BENCH_SECONDS (10, each wrk run).
# Under emulation the requests/s say little about speed on real hardware
# (every CPU is one host thread); the local share is what steering changes.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
out=$(mktemp -d)
printf '%-6s %-12s %8s %9s %7s\n' kernel mode local "req/s" failed
for kernel in ${BENCH_KERNELS:-6.1}; do
  "$repo/tests/lab/guest.sh" --tcg single --kernel "$kernel" --nodes 2 \
    --cpus-per-node 2 --mem 2048 --timeout 600 --build "$build" \
    -- "$repo/tests/lab/bench/connections_case.sh" >"$out/$kernel.log" 2>&1 ||
    { echo "connections.sh: the guest on $kernel failed; log: $out/$kernel.log" >&2; continue; }
  awk -v k="$kernel" '$1 == "RESULT" {
      printf "%-6s %-12s %7.1f%% %9.0f %7d\n", k, $2, 100 * $3, $4, $5 }' "$out/$kernel.log"
done
