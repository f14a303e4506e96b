/* ABI of bpf/softirq.bpf.c: softirq time per CPU and vector, hardirq time per
 * IRQ and CPU, and softirq time charged to the interrupted task. */
#ifndef LOCUS_BPF_SOFTIRQ_H_
#define LOCUS_BPF_SOFTIRQ_H_

/* BPF programs get __u32/__u64 from vmlinux.h, C++ from linux/types.h. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "locus/limits.h"

/* NET_RX in include/linux/interrupt.h. */
#define LOCUS_NET_RX_SOFTIRQ 3

/* Per CPU (per-CPU array, one element). Cumulative since load. */
struct locus_softirq_cpu {
  __u64 softirq_start_ns; /* private to BPF: softirqs do not nest per CPU */
  __u64 hardirq_start_ns; /* private to BPF: hardirq handlers do not nest */
  __u32 sample_counter;   /* private to BPF: per-task attribution sampling */
  __u32 pad0;
  __u64 ns[LOCUS_NR_SOFTIRQS];
  __u64 count[LOCUS_NR_SOFTIRQS];
};

/* Per IRQ number (per-CPU hash). Cumulative since load. */
struct locus_irq_stat {
  __u64 count;
  __u64 ns;
};

/* Softirq time spent while a task was current (the task it interrupted, or
 * ksoftirqd). Sampled: one softirq exit in `sample_every` per CPU is charged,
 * scaled by sample_every, so these are estimates; cumulative since load. */
struct locus_softirq_task {
  __u32 tid;
  __u32 pid;
  char comm[LOCUS_COMM_LEN];
  __u64 net_rx_ns;
  __u64 softirq_ns; /* all vectors, NET_RX included */
};

enum locus_softirq_drop {
  LOCUS_SOFTIRQ_DROP_IRQ_MAP = 0,  /* per-IRQ map full */
  LOCUS_SOFTIRQ_DROP_STORAGE = 1,  /* per-task storage/map could not be had */
  LOCUS_SOFTIRQ_DROP_UNPAIRED = 2, /* exit without a matching entry */
  LOCUS_SOFTIRQ_LRU_INSERTS = 3,
  LOCUS_SOFTIRQ_NR_DROPS = 4,
};

#endif /* LOCUS_BPF_SOFTIRQ_H_ */
