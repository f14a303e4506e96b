# shellcheck shell=bash
# Sourced by the lab's scenarios (lib.sh) and the convergence benchmark
# (bench/case.sh), inside a guest.
#
# QEMU's multi-threaded TCG can let a vCPU run a stale int3 of the kernel's
# live code patching (text_poke_bp): a 6.12 guest died with "Oops: int3" in
# __handle_irq_event_percpu in about half the runs, right after locusd
# attached or detached its tracepoint programs (the first probe flips the
# tracepoint's static key, the second its static call), and a 6.1 guest
# froze within seconds in every Locus run of the benchmark once locusd's
# softirq windows attached and detached two programs several times a second.
# Two holders of empty programs on the same tracepoints keep the keys on and
# the static calls on the probe iterator, so that locusd's attach and detach
# patch no kernel text. The fentry site (task_numa_fault) is not held: it
# runs only on NUMA hinting faults. The holders' own attach still patches, and
# has frozen a guest: the lab's ctests run under single-threaded TCG too.

# tracepoints_hold BINARY DIR: starts two holders (BINARY is
# locus_bench_empty), logs in DIR, and waits until both have attached; their
# pids are added to tp_hold_pids. Returns 1, saying why on stderr, when they
# cannot attach within a minute.
tp_hold_pids=()
tracepoints_hold() {
  local bin=$1 dir=$2 i deadline=$((SECONDS + 60))
  for i in 1 2; do
    "$bin" >"$dir/tp_hold$i.log" 2>&1 &
    tp_hold_pids+=($!)
  done
  until grep -q attached "$dir/tp_hold1.log" && grep -q attached "$dir/tp_hold2.log"; do
    if ((SECONDS >= deadline)); then
      echo "cannot hold the tracepoints: $(cat "$dir"/tp_hold*.log)" >&2
      return 1
    fi
    sleep 0.2
  done
}
