// SPDX-License-Identifier: GPL-2.0
/* Softirq and hardirq sensor.
 *  - per CPU and vector: softirq time and count (every event; per-CPU array,
 *    one lookup per hook, no shared state);
 *  - per IRQ and CPU: hardirq count and time (per-CPU hash keyed by irq);
 *  - per task: softirq time charged to the task current when the softirq ran
 *    (the one it interrupted, or ksoftirqd). Sampled, because its cost would
 *    otherwise grow with the softirq rate: one exit in `sample_every` per CPU
 *    is charged, scaled by sample_every.
 * tp_btf programs use task storage + iter/task; raw_tp programs a tid-keyed
 * LRU hash. */
// clang-format off
#include "common.bpf.h" /* first: brings vmlinux.h */
#include "locus/softirq.h"
// clang-format on

char LICENSE[] SEC("license") = "GPL";

/* Load-time knob: charge one softirq exit in this many to the current task. */
const volatile __u32 sample_every = 8;

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct locus_softirq_cpu);
} cpu_stats SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
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

static __always_inline void softirq_entry(unsigned int vec) {
  __u32 zero = 0;
  struct locus_softirq_cpu *c = bpf_map_lookup_elem(&cpu_stats, &zero);
  if (c) c->softirq_start_ns = bpf_ktime_get_ns();
}

/* Accounts the softirq that just ended; returns its duration when this exit
 * is the sampled one for per-task charging (already scaled), else 0. */
static __always_inline __u64 softirq_exit(unsigned int vec) {
  __u32 zero = 0;
  struct locus_softirq_cpu *c = bpf_map_lookup_elem(&cpu_stats, &zero);
  if (!c || vec >= LOCUS_NR_SOFTIRQS) return 0;
  if (!c->softirq_start_ns) {
    LOCUS_COUNT(drops, LOCUS_SOFTIRQ_DROP_UNPAIRED);
    return 0;
  }
  __u64 delta = bpf_ktime_get_ns() - c->softirq_start_ns;
  c->softirq_start_ns = 0;
  c->ns[vec] += delta;
  c->count[vec]++;
  if (++c->sample_counter < sample_every) return 0;
  c->sample_counter = 0;
  return delta * sample_every;
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
  __u32 zero = 0;
  struct locus_softirq_cpu *c = bpf_map_lookup_elem(&cpu_stats, &zero);
  if (c) c->hardirq_start_ns = bpf_ktime_get_ns();
}

static __always_inline void hardirq_exit(int irq) {
  __u32 zero = 0;
  struct locus_softirq_cpu *c = bpf_map_lookup_elem(&cpu_stats, &zero);
  if (!c) return;
  if (!c->hardirq_start_ns) {
    LOCUS_COUNT(drops, LOCUS_SOFTIRQ_DROP_UNPAIRED);
    return;
  }
  __u64 delta = bpf_ktime_get_ns() - c->hardirq_start_ns;
  c->hardirq_start_ns = 0;
  __u32 key = irq;
  struct locus_irq_stat *s = bpf_map_lookup_elem(&irq_stats, &key);
  if (!s) {
    struct locus_irq_stat init = {};
    if (bpf_map_update_elem(&irq_stats, &key, &init, BPF_NOEXIST) != 0 &&
        !bpf_map_lookup_elem(&irq_stats, &key)) {
      LOCUS_COUNT(drops, LOCUS_SOFTIRQ_DROP_IRQ_MAP);
      return;
    }
    s = bpf_map_lookup_elem(&irq_stats, &key);
    if (!s) return;
  }
  s->count++;
  s->ns += delta;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(softirq_entry_btf, unsigned int vec) {
  softirq_entry(vec);
  return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(softirq_exit_btf, unsigned int vec) {
  __u64 scaled = softirq_exit(vec);
  if (!scaled) return 0;
  struct task_struct *task = bpf_get_current_task_btf();
  charge(bpf_task_storage_get(&task_stats, task, 0,
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
  softirq_entry(vec);
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

SEC("iter/task")
int dump_softirq(struct bpf_iter__task *ctx) {
  struct task_struct *task = ctx->task;
  if (!task) return 0;
  struct locus_softirq_task *t = bpf_task_storage_get(&task_stats, task, 0, 0);
  if (!t) return 0;
  struct locus_softirq_task out = *t;
  out.tid = task->pid;
  out.pid = task->tgid;
  __builtin_memcpy(out.comm, task->comm, sizeof(out.comm));
  bpf_seq_write(ctx->meta->seq, &out, sizeof(out));
  return 0;
}
