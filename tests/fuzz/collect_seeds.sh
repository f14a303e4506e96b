#!/bin/bash
# Adds seed inputs for the fuzz targets to tests/fuzz/corpus/<target>/ from a
# live kernel's /proc and /sys (or a fixture tree shaped like them), each file
# named <what>-<tag>. Files are cut to their first lines so seeds stay small.
#
#   tests/fuzz/collect_seeds.sh [--proc DIR] [--sys DIR] [--pid PID] [--tag TAG]
#
# Defaults: /proc, /sys, this script's own process, the kernel release
# (uname -r up to the first '-'). Examples:
#   tests/fuzz/collect_seeds.sh                                   # this host
#   tests/fuzz/collect_seeds.sh --proc tests/fixtures/numa4/proc \
#       --sys tests/fixtures/numa4/sys --pid 200 --tag fixture-numa4
#   tests/lab/guest.sh --kernel 6.1 -- tests/fuzz/collect_seeds.sh --pid N
set -euo pipefail

corpus=$(cd "$(dirname "$0")" && pwd)/corpus
proc=/proc
sys=/sys
pid=$$
tag=$(uname -r | cut -d- -f1)
while [ $# -gt 0 ]; do
  case "$1" in
    --proc) proc=$2; shift 2 ;;
    --sys) sys=$2; shift 2 ;;
    --pid) pid=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    *) echo "collect_seeds.sh: unknown argument $1 (see the header)" >&2; exit 2 ;;
  esac
done
max_lines=60

# seed TARGET NAME FILE: the first lines of FILE, when it can be read.
seed() {
  local out="$corpus/$1/$2-$tag"
  [ -r "$3" ] || return 0
  mkdir -p "$corpus/$1"
  head -n "$max_lines" "$3" > "$out" 2>/dev/null || rm -f "$out"
  [ -s "$out" ] || rm -f "$out"
}

task=$(ls "$proc/$pid/task" 2>/dev/null | sort -n | tail -n 1 || true)
seed proc_stat stat "$proc/$pid/stat"
[ -n "$task" ] && seed proc_stat task-stat "$proc/$pid/task/$task/stat"
seed proc_status status "$proc/$pid/status"
seed proc_cmdline cmdline "$proc/$pid/cmdline"
seed proc_cgroup cgroup "$proc/$pid/cgroup"
seed proc_cgroup cgroup-init "$proc/1/cgroup"
seed proc_sched sched "$proc/$pid/sched"
[ -n "$task" ] && seed proc_sched task-sched "$proc/$pid/task/$task/sched"
seed numa_maps numa_maps "$proc/$pid/numa_maps"
seed interrupts interrupts "$proc/interrupts"
# proc_maps: maps, a NUL, then numa_maps of the same process.
if [ -r "$proc/$pid/maps" ]; then
  mkdir -p "$corpus/proc_maps"
  { head -n "$max_lines" "$proc/$pid/maps"; printf '\0'
    head -n "$max_lines" "$proc/$pid/numa_maps" 2>/dev/null || true
  } > "$corpus/proc_maps/maps-$tag"
fi

cpu_dir=$sys/devices/system/cpu
node_dir=$sys/devices/system/node
for f in online present possible; do seed cpu_list "cpu-$f" "$cpu_dir/$f"; done
for n in "$node_dir"/node[0-9]*; do
  [ -d "$n" ] || continue
  seed cpu_list "$(basename "$n")-cpulist" "$n/cpulist"
  seed cpu_mask "$(basename "$n")-cpumap" "$n/cpumap"
done
# Two IRQs' affinity, as list and as mask.
for irq in $(ls "$proc/irq" 2>/dev/null | grep -E '^[0-9]+$' | sort -n | tail -n 2); do
  seed cpu_list "irq$irq-affinity_list" "$proc/irq/$irq/smp_affinity_list"
  seed cpu_mask "irq$irq-affinity" "$proc/irq/$irq/smp_affinity"
done

# topology: the files ReadTopology reads, as "== <path>" sections.
mkdir -p "$corpus/topology"
{
  for f in online present; do
    [ -r "$cpu_dir/$f" ] && { echo "== cpu/$f"; cat "$cpu_dir/$f"; }
  done
  for n in "$node_dir"/node[0-9]*; do
    [ -d "$n" ] || continue
    for f in cpulist meminfo distance; do
      [ -r "$n/$f" ] && { echo "== $(basename "$n")/$f"; grep -v '^$' "$n/$f" || true; }
    done
  done
} > "$corpus/topology/sysfs-$tag.tmp" 2>/dev/null || true
if [ -s "$corpus/topology/sysfs-$tag.tmp" ]; then
  mv "$corpus/topology/sysfs-$tag.tmp" "$corpus/topology/sysfs-$tag"
else
  rm -f "$corpus/topology/sysfs-$tag.tmp"
fi
# The same text twice (e.g. every CPU online and present) is one seed.
for dir in "$corpus"/*/; do
  (cd "$dir" && md5sum -- * | sort | awk 'seen[$1]++ { print $2 }' | xargs -r rm -f --)
done
echo "collect_seeds.sh: seeds tagged $tag in $corpus"
