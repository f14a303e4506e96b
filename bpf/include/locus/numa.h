/* ABI of bpf/numa.bpf.c: per-task NUMA hinting faults by memory node. */
#ifndef LOCUS_BPF_NUMA_H_
#define LOCUS_BPF_NUMA_H_

/* BPF programs get __u32/__u64 from vmlinux.h, C++ from linux/types.h. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "locus/limits.h"

/* TNF_FAULT_LOCAL from include/linux/sched/numa_balancing.h. */
#define LOCUS_TNF_FAULT_LOCAL 0x08

/* fentry/task_numa_fault path: exact pages per memory node, split by whether
 * the faulting CPU was on that node. Cumulative since load. Value of a
 * tid-keyed LRU hash. */
struct locus_numa_fentry_task {
  __u32 tid;
  __u32 pid;
  char comm[LOCUS_COMM_LEN];
  __u64 local_pages[LOCUS_MAX_NODES];
  __u64 remote_pages[LOCUS_MAX_NODES];
};

/* iter/task path: a copy of the kernel's own task->numa_faults, which it
 * decays (halves) every scan period, so these are recent-activity weights,
 * not cumulative counts. mem = by memory node, cpu = by node of the faulting
 * CPU; locality is task->numa_faults_locality (remote, local, failed). */
struct locus_numa_iter_task {
  __u32 tid;
  __u32 pid;
  char comm[LOCUS_COMM_LEN];
  __u64 mem_faults[LOCUS_MAX_NODES];
  __u64 cpu_faults[LOCUS_MAX_NODES];
  __u64 remote;
  __u64 local;
  __u64 failed_migrations;
  __u64 total_numa_faults;
  __s32 preferred_nid;
  __u32 pad0;
};

enum locus_numa_drop {
  LOCUS_NUMA_DROP_NODE = 0, /* node id >= LOCUS_MAX_NODES */
  LOCUS_NUMA_DROP_MAP = 1,  /* LRU insert failed */
  LOCUS_NUMA_LRU_INSERTS = 2,
  LOCUS_NUMA_NR_DROPS = 3,
};

/* The names in readings. The LRU's inserts are no loss: the agent reports
 * the evictions they imply ("numa.lru_evicted"). */
LOCUS_DROP_NAMES(kLocusNumaDropNames, "numa.node_out_of_range", "numa.map_full",
                 nullptr);

#endif /* LOCUS_BPF_NUMA_H_ */
