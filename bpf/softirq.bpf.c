// SPDX-License-Identifier: GPL-2.0
/* Softirq and hardirq sensor.
 *  - per CPU and vector: softirq count (every event) and time (sampled);
 *  - per IRQ and CPU: hardirq count and time, both sampled (see
 *    locus/softirq.h);
 *  - per task: softirq time charged to the task current when a sampled
 *    softirq ran (the one it interrupted, or ksoftirqd).
 * Every event costs one per-CPU slot update in a global array; only one in
 * `*_mask + 1` reads the clock (the dominant cost here) and touches
 * per-IRQ or per-task state, so the cost per event stays flat as the rate
 * grows.
 * tp_btf programs keep per-task state in task storage, which the sched
 * object's task iterator reads (the agent shares the map); raw_tp programs
 * in a tid-keyed LRU hash. */
// clang-format off
#include "common.bpf.h" /* first: brings vmlinux.h */
#include "locus/softirq.h"
// clang-format on

char LICENSE[] SEC("license") = "GPL";

/* Per-CPU slots, read by the agent through the skeleton's mmap of .bss; it
 * sets each slot's sampling masks before load, and opens and closes the
 * softirq hooks' gate (softirq_on) while they run. */
struct locus_softirq_cpu cpu_slots[LOCUS_MAX_CPUS] = {};

/* Per IRQ and CPU at cpu * LOCUS_MAX_IRQS + irq; the agent sizes it to the
 * possible CPUs before load and mmaps it. Array lookups are inlined by the
 * verifier: no helper call on the hot path. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __uint(max_entries, LOCUS_MAX_IRQS);
  __type(key, __u32);
  __type(value, struct locus_irq_stat);
} irq_stats SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct locus_softirq_task);
} task_stats SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, LOCUS_MAX_TASKS);
  __type(key, __u32);
  __type(value, struct locus_softirq_task);
} task_lru SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, LOCUS_SOFTIRQ_NR_DROPS);
  __type(key, __u32);
  __type(value, __u64);
} drops SEC(".maps");

static __always_inline struct locus_softirq_cpu *this_cpu_slot(void) {
  int slot = locus_cpu_slot(bpf_get_smp_processor_id());
  if (slot < 0) {
    LOCUS_COUNT(drops, LOCUS_SOFTIRQ_DROP_CPU);
    return 0;
  }
  return &cpu_slots[slot];
}

/* The softirq hooks' slot while their gate is open, else 0: closed, they
 * cost about what an empty program does. */
static __always_inline struct locus_softirq_cpu *softirq_slot(void) {
  struct locus_softirq_cpu *c = this_cpu_slot();
  return c && c->softirq_on ? c : 0;
}

static __always_inline void softirq_entry(void) {
  struct locus_softirq_cpu *c = softirq_slot();
  if (!c) return;
  if ((++c->softirq_tick & c->softirq_mask) == 0)
    c->softirq_start_ns = bpf_ktime_get_ns();
}

/* Counts the softirq that just ended; returns its duration scaled by the
 * sampling period when it was sampled, else 0. */
static __always_inline __u64 softirq_exit(unsigned int vec) {
  struct locus_softirq_cpu *c = softirq_slot();
  if (!c || vec >= LOCUS_NR_SOFTIRQS) return 0;
  c->count[vec]++;
  if (!c->softirq_start_ns) return 0;
  __u64 delta = bpf_ktime_get_ns() - c->softirq_start_ns;
  c->softirq_start_ns = 0;
  c->sampled_ns[vec] += delta;
  c->sampled_count[vec]++;
  return delta * (c->softirq_mask + 1);
}

static __always_inline void charge(struct locus_softirq_task *t,
                                   unsigned int vec, __u64 scaled) {
  if (!t) {
    LOCUS_COUNT(drops, LOCUS_SOFTIRQ_DROP_STORAGE);
    return;
  }
  t->softirq_ns += scaled;
  if (vec == LOCUS_NET_RX_SOFTIRQ) t->net_rx_ns += scaled;
}

static __always_inline void hardirq_entry(void) {
  struct locus_softirq_cpu *c = this_cpu_slot();
  if (c && (++c->hardirq_tick & c->hardirq_mask) == 0)
    c->hardirq_start_ns = bpf_ktime_get_ns();
}

static __always_inline void hardirq_exit(int irq) {
  struct locus_softirq_cpu *c = this_cpu_slot();
  if (!c || !c->hardirq_start_ns) return; /* not sampled: the common case */
  __u64 delta = bpf_ktime_get_ns() - c->hardirq_start_ns;
  c->hardirq_start_ns = 0;
  if ((__u32)irq >= LOCUS_MAX_IRQS) {
    LOCUS_COUNT(drops, LOCUS_SOFTIRQ_DROP_IRQ);
    return;
  }
  __u32 key = bpf_get_smp_processor_id() * LOCUS_MAX_IRQS + irq;
  struct locus_irq_stat *s = bpf_map_lookup_elem(&irq_stats, &key);
  if (!s) return; /* cpu beyond the map's possible CPUs */
  s->sampled_ns += delta;
  s->sampled_count++;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(softirq_entry_btf, unsigned int vec) {
  softirq_entry();
  return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(softirq_exit_btf, unsigned int vec) {
  __u64 scaled = softirq_exit(vec);
  if (!scaled) return 0;
  charge(bpf_task_storage_get(&task_stats, bpf_get_current_task_btf(), 0,
                              BPF_LOCAL_STORAGE_GET_F_CREATE),
         vec, scaled);
  return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(irq_entry_btf, int irq) {
  hardirq_entry();
  return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(irq_exit_btf, int irq) {
  hardirq_exit(irq);
  return 0;
}

static __always_inline struct locus_softirq_task *lru_current(void) {
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tid = (__u32)id;
  struct locus_softirq_task *t = bpf_map_lookup_elem(&task_lru, &tid);
  if (t) return t;
  struct locus_softirq_task init = {.tid = tid, .pid = id >> 32};
  bpf_get_current_comm(&init.comm, sizeof(init.comm));
  if (bpf_map_update_elem(&task_lru, &tid, &init, BPF_NOEXIST) == 0)
    LOCUS_COUNT(drops, LOCUS_SOFTIRQ_LRU_INSERTS);
  return bpf_map_lookup_elem(&task_lru, &tid);
}

SEC("raw_tp/softirq_entry")
int BPF_PROG(softirq_entry_raw, unsigned int vec) {
  softirq_entry();
  return 0;
}

SEC("raw_tp/softirq_exit")
int BPF_PROG(softirq_exit_raw, unsigned int vec) {
  __u64 scaled = softirq_exit(vec);
  if (scaled) charge(lru_current(), vec, scaled);
  return 0;
}

SEC("raw_tp/irq_handler_entry")
int BPF_PROG(irq_entry_raw, int irq) {
  hardirq_entry();
  return 0;
}

SEC("raw_tp/irq_handler_exit")
int BPF_PROG(irq_exit_raw, int irq) {
  hardirq_exit(irq);
  return 0;
}
