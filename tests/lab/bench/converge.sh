#!/bin/bash
# The lab's side-by-side convergence benchmark (a script, not a ctest): the
# same guest, the same scenario, under each tool, as a table, CSV samples and
# a PNG plot of the curves. Run as root after building locusd, locusctl,
# lab_memhog, lab_sampler and locus_bench_empty:
#
#   tests/lab/bench/converge.sh [BUILD_DIR] [OUT_DIR]      (build, BUILD_DIR/lab-bench)
#   tests/lab/bench/converge.sh --summarize OUT_DIR         (table and plot again)
#
# Guest: 2 nodes x 2 CPUs, 2 GiB (tests/lab/guest.sh, TCG), one guest per
# (kernel, workload, tool). Workloads and tools: see case.sh's header; in
# short, lab_memhog with 200 and 600 MiB first-touched on node 1 and running
# on node 0 (local share = its pages on its node), and nginx on node 1 with
# the NIC's IRQ on node 0 under wrk through the NIC (local share = NET_RX
# softirqs on the workers' node), under: nothing, AutoNUMA, numad,
# irqbalance, Locus alone and Locus with AutoNUMA.
#
# Output in OUT_DIR: KERNEL/WORKLOAD.TOOL.csv (samples, columns in case.sh)
# and the tools' logs, table.txt (printed too), converge-KERNEL.png.
# Table columns:
#   t95        seconds from the workload's start to the first sample with
#              >= 95 % local ("never" within the run)
#   final      local share, mean over the last 3 s
#   MiB moved  pages migrated during the run (pgmigrate_success, whole guest)
#   AutoNUMA   of which by NUMA balancing (numa_pages_migrated)
#   pins, irq  affinity changes of the workload's threads / the NIC IRQ seen
#   settled    moves per entity per minute over the run's last 10 s, when 95 %
#              was reached before them ("-" otherwise): affinity changes,
#              plus (memhog) sample intervals in which its pages on its node
#              changed in number; entities: the memhog process, or the 2
#              nginx workers and the NIC's queue IRQs
#
# ratios.txt (printed too, ratios.py): the page mover's ratios (Locus's
# t95 for 600 MiB over the move_pages ceiling measured in the same guest and
# over AutoNUMA's; memhog4x150 with one mover over the default pool; the
# control loop's tick duration while pages move).
#
# Env: BENCH_KERNELS ("6.1"; e.g. "6.1 6.12"), BENCH_WORKLOADS
# ("memhog200 memhog600 nginx"; also memhog4x150), BENCH_TOOLS ("none
# autonuma numad irqbalance locus locus_autonuma"; also locus_1mover),
# BENCH_SECONDS (30), BENCH_PERIOD_MS (150), BENCH_TICK (locusd --tick,
# 250ms).
set -uo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)

# BENCH_TICK (250ms, 1s, ...) in milliseconds, for ratios.py.
tick_ms() {
  local tick=${BENCH_TICK:-250ms}
  case $tick in
    *ms) echo "${tick%ms}" ;;
    *s) echo "$((${tick%s} * 1000))" ;;
    *) echo 250 ;;
  esac
}

summarize() {
  local out=$1 kernel_dir kernel csv
  {
    printf '%-6s %-10s %-15s %7s %6s %9s %8s %5s %4s %8s\n' kernel workload tool \
      t95 final "MiB moved" "AutoNUMA" pins irq settled
    for kernel_dir in "$out"/*/; do
      kernel=$(basename "$kernel_dir")
      for csv in "$kernel_dir"*.csv; do
        [ -e "$csv" ] || continue
        local name=${csv##*/}
        name=${name%.csv}
        awk -F, -v kernel="$kernel" -v workload="${name%%.*}" -v tool="${name#*.}" '
          NR == 1 { next }
          { t[n] = $1; local[n] = $2; total[n] = $3; share[n] = $3 > 0 ? $2 / $3 : -1
            mig[n] = $5; numa[n] = $6; pins[n] = $7; irq[n] = $8; irqs = $9 == "" ? 0 : split($9, parts, "/"); n++ }
          END {
            if (n == 0) { printf "%-6s %-10s %-15s no samples\n", kernel, workload, tool; exit }
            end = t[n - 1]; t95 = -1
            for (i = 0; i < n; i++) if (share[i] >= 0.95) { t95 = i; break }
            sum = 0; m = 0
            for (i = 0; i < n; i++) if (t[i] >= end - 3 && share[i] >= 0) { sum += share[i]; m++ }
            entities = workload == "nginx" ? 2 + irqs : 1
            # Settled: the last 10 s, when 95 % was reached before them.
            settle = n - 1
            while (settle > 0 && t[settle - 1] >= end - 10) settle--
            after = "-"
            if (t95 >= 0 && t95 < settle) {
              moves = pins[n - 1] - pins[settle] + irq[n - 1] - irq[settle]
              if (workload != "nginx")
                for (i = settle + 1; i < n; i++) if (local[i] != local[i - 1]) moves++
              after = sprintf("%.1f", moves / entities / ((end - t[settle]) / 60))
            }
            printf("%-6s %-10s %-15s %7s %5s%% %9.0f %8.0f %5d %4d %8s\n", kernel, workload, tool,
              (t95 >= 0 ? sprintf("%.1f s", t[t95]) : "never"),
              (m > 0 ? sprintf("%.0f", 100 * sum / m) : "-"),
              mig[n - 1] * 4 / 1024, numa[n - 1] * 4 / 1024, pins[n - 1], irq[n - 1], after)
          }' "$csv"
      done
    done
  } | tee "$out/table.txt"
  "$repo/tests/lab/bench/ratios.py" "$out" "$(tick_ms)" | tee "$out/ratios.txt"
  plot "$out"
}

plot() {
  local out=$1 kernel_dir kernel workload csv spec
  command -v gnuplot >/dev/null || { echo "converge.sh: no gnuplot, no plot" >&2; return 0; }
  for kernel_dir in "$out"/*/; do
    kernel=$(basename "$kernel_dir")
    {
      echo "set terminal pngcairo size 2000,480 font ',10'"
      echo "set output '$out/converge-$kernel.png'"
      echo "set datafile separator ','"
      echo "set multiplot layout 1,4 title 'Local share over time, 2 nodes x 2 CPUs, kernel $kernel (TCG guest)'"
      echo "set xlabel 'seconds since the workload started'; set yrange [0:105]; set key bottom right"
      for workload in memhog200 memhog600 memhog4x150 nginx; do
        spec=
        for csv in "$kernel_dir$workload".*.csv; do
          [ -e "$csv" ] || continue
          local tool=${csv##*/$workload.}
          tool=${tool%.csv}
          spec+="${spec:+, }'$csv' every ::1 using 1:(\$3 > 0 ? 100 * \$2 / \$3 : NaN) with lines lw 2 title '$tool'"
        done
        [ -n "$spec" ] || continue
        case $workload in
          nginx) echo "set ylabel \"NET\\\\_RX softirqs on the workers' node, % (1 s window)\""
                 echo "set title 'nginx: NIC IRQ on node 0, workers on node 1'" ;;
          *) echo "set ylabel 'resident pages on its node, %'"
             echo "set title 'lab\\_memhog ${workload#memhog} MiB: touched on node 1, runs on node 0'" ;;
        esac
        echo "plot $spec"
      done
      echo "unset multiplot"
    } | gnuplot || echo "converge.sh: gnuplot failed for $kernel" >&2
  done
}

if [ "${1:-}" = --summarize ]; then
  [ -d "${2:-}" ] || { echo "usage: $0 --summarize OUT_DIR" >&2; exit 2; }
  summarize "$2"
  exit 0
fi

build=$(realpath "${1:-${LOCUS_BUILD_DIR:-$repo/build}}")
out=${2:-$build/lab-bench}
for bin in agent/main/locusd agent/ctl/locusctl tests/bench/lab_memhog tests/bench/lab_sampler \
  tests/bench/locus_bench_empty; do
  [ -x "$build/$bin" ] || { echo "converge.sh: missing $build/$bin (build it first)" >&2; exit 1; }
done
mkdir -p "$out" && out=$(realpath "$out")
failed=0
for kernel in ${BENCH_KERNELS:-6.1}; do
  mkdir -p "$out/$kernel"
  for workload in ${BENCH_WORKLOADS:-memhog200 memhog600 nginx}; do
    for tool in ${BENCH_TOOLS:-none autonuma numad irqbalance locus locus_autonuma}; do
      echo "=== kernel $kernel, $workload, $tool" >&2
      prefix=$out/$kernel/$workload.$tool
      rm -f "$prefix".*
      if ! "$repo/tests/lab/guest.sh" --kernel "$kernel" --nodes 2 --cpus-per-node 2 \
          --mem 2048 --timeout 600 --build "$build" --forward 80 --share "$out" \
          -- "$repo/tests/lab/bench/case.sh" "$tool" "$workload" "$build" "$prefix"; then
        echo "converge.sh: $workload under $tool on $kernel failed" >&2
        failed=1
      fi
    done
  done
done
summarize "$out"
exit $failed
