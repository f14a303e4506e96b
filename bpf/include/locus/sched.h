/* ABI of bpf/sched.bpf.c: per-task migrations and on-CPU time by node, and
 * per-CPU busy time. Shared verbatim by the BPF program and agent/sensors
 * (which static_asserts the layout).
 *
 * Cost model: nothing per task happens on sched_switch, and on
 * sched_migrate_task only when the move crosses a NUMA node. Migration counts
 * and runtime come from the kernel's own per-task accounting
 * (se.nr_migrations, se.sum_exec_runtime), read by the task iterator. */
#ifndef LOCUS_BPF_SCHED_H_
#define LOCUS_BPF_SCHED_H_

/* BPF programs get __u32/__u64 from vmlinux.h, C++ from linux/types.h. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "locus/limits.h"

/* One task: the record the task iterator emits (tp_btf path) and the value
 * of the tid-keyed LRU hash (raw_tp path). */
struct locus_sched_task {
  __u32 tid;
  __u32 pid;
  char comm[LOCUS_COMM_LEN];
  __s32 cpu; /* CPU it is on or last ran on */
  __u32 pad0;
  /* tp_btf: task->se.nr_migrations, over the task's life.
   * raw_tp: migrations seen since the program was loaded. */
  __u64 migrations;
  __u64 cross_node_migrations; /* since the program was loaded */
  /* On-CPU time by node of the CPU. tp_btf: over the task's life (exact:
   * the task stays on one node between cross-node moves). raw_tp: up to its
   * last migration seen since load. */
  __u64 runtime_ns[LOCUS_MAX_NODES];
  __u64 runtime_mark_ns; /* private: se.sum_exec_runtime at the last move */
  /* The softirq sensor's per-task figures (locus_softirq_task), read from
   * its task storage by this object's iterator when both sensors are on
   * tp_btf (one walk over the threads instead of two); 0 otherwise. */
  __u64 net_rx_ns;
  __u64 softirq_ns;
};

/* Task storage of the tp_btf path: created at a task's first cross-node
 * migration, freed with the task. */
struct locus_sched_task_state {
  __u64 cross_node_migrations;
  __u64 runtime_mark_ns; /* se.sum_exec_runtime at the last cross-node move */
  __u64 runtime_ns[LOCUS_MAX_NODES];
};

/* Per CPU: a cache-line-padded slot of a global array indexed by CPU (no map
 * lookup on sched_switch). Cumulative since load. Every switch is counted;
 * one in `sample_mask + 1` is timed (its rate grows with load), and the
 * agent scales: busy ~= sampled_busy_ns * switches / sampled_switches. */
struct locus_sched_cpu {
  __u64 switches;
  /* 2^n - 1, written by the agent into every slot before load: in this
   * line, which the hook touches anyway, rather than in .rodata, which
   * would be a second line on every switch. */
  __u32 sample_mask;
  __u32 pad32;
  __u64 sampled_switches;
  /* Sampled slices of fair-class tasks: se.sum_exec_runtime -
   * prev_sum_exec_runtime at switch-out (the kernel's clock, no timestamp
   * taken here). Idle contributes 0. */
  __u64 sampled_busy_ns;
  /* Sampled switch-outs of RT/DL tasks, whose slice that formula does not
   * give: counted, not timed. */
  __u64 sampled_untimed;
  __u64 pad[3];
};

/* Drop counters (per-CPU array indexed by these; off the hot paths). */
enum locus_sched_drop {
  LOCUS_SCHED_DROP_STORAGE = 0, /* per-task storage/map could not be had */
  LOCUS_SCHED_DROP_NODE = 1,    /* node id >= LOCUS_MAX_NODES */
  LOCUS_SCHED_LRU_INSERTS = 2,  /* new tasks put in the LRU (raw_tp) */
  LOCUS_SCHED_DROP_CPU = 3,     /* cpu id >= LOCUS_MAX_CPUS */
  LOCUS_SCHED_RENAMED_LOST = 4, /* a rename the `renamed` set had no room for */
  LOCUS_SCHED_NR_DROPS = 5,
};

/* The names in readings. The LRU's inserts are no loss: the agent reports
 * the evictions they imply ("sched.lru_evicted"). */
LOCUS_DROP_NAMES(kLocusSchedDropNames, "sched.storage_unavailable",
                 "sched.node_out_of_range", nullptr, "sched.cpu_out_of_range",
                 "sched.renamed_lost");

#endif /* LOCUS_BPF_SCHED_H_ */
