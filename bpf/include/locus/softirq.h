/* ABI of bpf/softirq.bpf.c: softirq count and time per CPU and vector,
 * hardirq count and time per IRQ and CPU, and softirq time charged to the
 * interrupted task.
 *
 * Cost model: the softirq hooks count every event they see per CPU and
 * vector in the CPU's slot of a global array (no helper call, no
 * timestamp): the exact counts when they trace all the time. Traced in
 * windows, the programs stay attached (attaching and detaching would patch
 * kernel text, which interrupts every CPU) and return at once while their
 * CPU's slot says the window is closed (softirq_on), and the agent takes the
 * counts from /proc/softirqs. Time is sampled, because
 * reading the clock costs more than everything else on these hooks and
 * their rate grows with load: one event in `*_mask + 1` per CPU is timed,
 * and the agent scales: ns ~= sampled_ns * count / sampled_count.
 * Hardirqs are sampled whole: an unsampled one touches only the CPU's slot
 * (one cache line: nearly all of the exit hook's cost over an empty program's
 * in tests/bench/sensor_overhead.sh), and one hardirq in `hardirq_mask + 1`
 * per CPU updates its IRQ's element (timed and counted there); the agent
 * estimates counts as sampled_count * (hardirq_mask + 1). Exact per-IRQ
 * counts are the kernel's own, in /proc/interrupts, which the host model
 * reads; touching a per-IRQ element on every hardirq would mean a second cold
 * cache line on every event. */
#ifndef LOCUS_BPF_SOFTIRQ_H_
#define LOCUS_BPF_SOFTIRQ_H_

/* BPF programs get __u32/__u64 from vmlinux.h, C++ from linux/types.h. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "locus/limits.h"

/* NET_RX in include/linux/interrupt.h. */
#define LOCUS_NET_RX_SOFTIRQ 3

/* Per CPU: cache-line-padded slot of a global array indexed by CPU.
 * Cumulative since load. Everything a hook touches on an unsampled event is
 * in the first cache line, the sampling periods and the gate included: the
 * agent writes the periods into every slot before load (a load-time constant
 * in .rodata would be a second cache line, often cold, on every event), and
 * flips the gate in every slot at each window's edge (a global gate would be
 * that second line too). */
struct locus_softirq_cpu {
  __u64 softirq_start_ns; /* private: set when this softirq is sampled */
  __u64 hardirq_start_ns; /* private: set when this hardirq is sampled */
  __u32 softirq_tick;     /* private: sampling counter */
  __u32 hardirq_tick;     /* private: sampling counter */
  __u32 softirq_mask;     /* time one softirq in softirq_mask + 1 (2^n - 1) */
  __u32 hardirq_mask;     /* time one hardirq in hardirq_mask + 1 (2^n - 1) */
  __u32 softirq_on;       /* softirq hooks trace while non-zero: the gate */
  __u32 reserved;
  __u64 count[LOCUS_NR_SOFTIRQS];
  __u64 sampled_ns[LOCUS_NR_SOFTIRQS];
  __u64 sampled_count[LOCUS_NR_SOFTIRQS];
  __u64 pad[5];
};

/* Per IRQ and CPU: array map element at cpu * LOCUS_MAX_IRQS + irq, updated
 * by sampled hardirqs only. Cumulative since load. */
struct locus_irq_stat {
  __u64 sampled_ns;
  __u64 sampled_count;
};

/* Softirq time spent while a task was current (the task it interrupted, or
 * ksoftirqd): charged on sampled softirqs only, scaled by the sampling
 * period, so these are estimates. Cumulative since load (raw_tp path) or
 * since the task's first sampled softirq (tp_btf path: task storage). */
struct locus_softirq_task {
  __u32 tid;
  __u32 pid;
  char comm[LOCUS_COMM_LEN];
  __u64 net_rx_ns;
  __u64 softirq_ns; /* all vectors, NET_RX included */
};

enum locus_softirq_drop {
  LOCUS_SOFTIRQ_DROP_IRQ = 0,     /* a sampled irq >= LOCUS_MAX_IRQS */
  LOCUS_SOFTIRQ_DROP_STORAGE = 1, /* per-task storage/map could not be had */
  LOCUS_SOFTIRQ_DROP_CPU = 2,     /* cpu >= LOCUS_MAX_CPUS */
  LOCUS_SOFTIRQ_LRU_INSERTS = 3,
  LOCUS_SOFTIRQ_NR_DROPS = 4,
};

/* The names in readings. The LRU's inserts are no loss: the agent reports
 * the evictions they imply ("softirq.lru_evicted"). */
LOCUS_DROP_NAMES(kLocusSoftirqDropNames, "softirq.irq_out_of_range",
                 "softirq.storage_unavailable", "softirq.cpu_out_of_range",
                 nullptr);

#endif /* LOCUS_BPF_SOFTIRQ_H_ */
