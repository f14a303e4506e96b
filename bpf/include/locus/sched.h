/* ABI of bpf/sched.bpf.c: per-task scheduler counters. Shared verbatim by the
 * BPF program and agent/bpf (which static_asserts the layout). All counters
 * are cumulative since the program was loaded. */
#ifndef LOCUS_BPF_SCHED_H_
#define LOCUS_BPF_SCHED_H_

/* BPF programs get __u32/__u64 from vmlinux.h, C++ from linux/types.h. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "locus/limits.h"

/* One task. Value of the per-task storage (tp_btf path) or of the tid-keyed
 * LRU hash (raw_tp path); also the record the task iterator emits. */
struct locus_sched_task {
  __u32 tid;
  __u32 pid;
  char comm[LOCUS_COMM_LEN];
  __s32 last_cpu; /* CPU it last ran on (from sched_switch), -1 unknown */
  __u32 pad0;
  __u64 migrations;
  __u64 cross_node_migrations;
  __u64 runtime_ns[LOCUS_MAX_NODES]; /* on-CPU time by node of the CPU */
};

/* Per CPU (per-CPU array, one element). */
struct locus_sched_cpu {
  __u64 last_switch_ns; /* private to BPF */
  __u64 busy_ns;        /* time a non-idle task was on this CPU */
  __u64 switches;
};

/* Drop counters (per-CPU array indexed by these). */
enum locus_sched_drop {
  LOCUS_SCHED_DROP_STORAGE = 0, /* per-task storage/map could not be had */
  LOCUS_SCHED_DROP_NODE = 1,    /* node id >= LOCUS_MAX_NODES */
  LOCUS_SCHED_LRU_INSERTS = 2,  /* new tasks put in the LRU (fallback) */
  LOCUS_SCHED_NR_DROPS = 3,
};

#endif /* LOCUS_BPF_SCHED_H_ */
