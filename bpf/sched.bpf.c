// SPDX-License-Identifier: GPL-2.0
/* Scheduler sensor: per-task migrations (and how many crossed a NUMA node)
 * and on-CPU time by node.
 *
 * Two attachments of the same logic, chosen by the agent's feature probe:
 *  - tp_btf programs keep per-task state in task storage (no hashing on the
 *    sched_switch hot path, freed with the task), read out by iter/task;
 *  - raw_tp programs keep it in a tid-keyed LRU hash read by map iteration,
 *    for kernels without tp_btf/task storage/task iterators. */
// clang-format off
#include "common.bpf.h" /* first: brings vmlinux.h */
#include "locus/sched.h"
// clang-format on

char LICENSE[] SEC("license") = "GPL";

/* Load-time knobs. */
const volatile __u32 cpu_node[LOCUS_MAX_CPUS] = {};

struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct locus_sched_task);
} task_stats SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, LOCUS_MAX_TASKS);
  __type(key, __u32);
  __type(value, struct locus_sched_task);
} task_lru SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct locus_sched_cpu);
} cpu_stats SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, LOCUS_SCHED_NR_DROPS);
  __type(key, __u32);
  __type(value, __u64);
} drops SEC(".maps");

static __always_inline __u32 node_of(int cpu) {
  __u32 c = (__u32)cpu;
  if (c >= LOCUS_MAX_CPUS) return 0;
  /* The barrier stops clang from folding the check into a form the verifier
   * cannot use as a bound; the mask (a power of two) is the bound. */
  asm volatile("" : "+r"(c));
  return cpu_node[c & (LOCUS_MAX_CPUS - 1)];
}

static __always_inline struct locus_sched_task *lru_task(
    struct task_struct *p) {
  __u32 tid = BPF_CORE_READ(p, pid);
  struct locus_sched_task *t = bpf_map_lookup_elem(&task_lru, &tid);
  if (t) return t;
  struct locus_sched_task init = {.tid = tid, .last_cpu = -1};
  init.pid = BPF_CORE_READ(p, tgid);
  BPF_CORE_READ_STR_INTO(&init.comm, p, comm);
  if (bpf_map_update_elem(&task_lru, &tid, &init, BPF_NOEXIST) == 0)
    LOCUS_COUNT(drops, LOCUS_SCHED_LRU_INSERTS);
  t = bpf_map_lookup_elem(&task_lru, &tid);
  if (!t) LOCUS_COUNT(drops, LOCUS_SCHED_DROP_STORAGE);
  return t;
}

static __always_inline void on_migrate(struct locus_sched_task *t,
                                       struct task_struct *p, int dest_cpu) {
  if (!t) return;
  t->migrations++;
  if (node_of(locus_task_cpu(p)) != node_of(dest_cpu))
    t->cross_node_migrations++;
}

/* Charges the slice that just ended on this CPU to prev; returns its length
 * (0 for the idle task or the first switch seen on this CPU). */
static __always_inline __u64 end_slice(struct task_struct *prev, int *cpu) {
  __u32 zero = 0;
  struct locus_sched_cpu *c = bpf_map_lookup_elem(&cpu_stats, &zero);
  if (!c) return 0;
  __u64 now = bpf_ktime_get_ns();
  __u64 delta = c->last_switch_ns ? now - c->last_switch_ns : 0;
  c->last_switch_ns = now;
  c->switches++;
  *cpu = bpf_get_smp_processor_id();
  if (BPF_CORE_READ(prev, pid) == 0) return 0; /* idle */
  c->busy_ns += delta;
  return delta;
}

static __always_inline void charge(struct locus_sched_task *t, int cpu,
                                   __u64 delta) {
  if (!t) return;
  t->last_cpu = cpu;
  __u32 node = node_of(cpu);
  if (node >= LOCUS_MAX_NODES) {
    LOCUS_COUNT(drops, LOCUS_SCHED_DROP_NODE);
    return;
  }
  t->runtime_ns[node] += delta;
}

static __always_inline struct locus_sched_task *storage_task(
    struct task_struct *p) {
  struct locus_sched_task *t =
      bpf_task_storage_get(&task_stats, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!t) LOCUS_COUNT(drops, LOCUS_SCHED_DROP_STORAGE);
  return t;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(migrate_btf, struct task_struct *p, int dest_cpu) {
  on_migrate(storage_task(p), p, dest_cpu);
  return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_btf, bool preempt, struct task_struct *prev) {
  int cpu = 0;
  __u64 delta = end_slice(prev, &cpu);
  if (prev->pid == 0) return 0;
  charge(storage_task(prev), cpu, delta);
  return 0;
}

SEC("raw_tp/sched_migrate_task")
int BPF_PROG(migrate_raw, struct task_struct *p, int dest_cpu) {
  on_migrate(lru_task(p), p, dest_cpu);
  return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(switch_raw, bool preempt, struct task_struct *prev) {
  int cpu = 0;
  __u64 delta = end_slice(prev, &cpu);
  if (BPF_CORE_READ(prev, pid) == 0) return 0;
  charge(lru_task(prev), cpu, delta);
  return 0;
}

/* Emits one locus_sched_task per task that has storage (tp_btf path). */
SEC("iter/task")
int dump_sched(struct bpf_iter__task *ctx) {
  struct task_struct *task = ctx->task;
  if (!task) return 0;
  struct locus_sched_task *t = bpf_task_storage_get(&task_stats, task, 0, 0);
  if (!t) return 0;
  struct locus_sched_task out = *t;
  out.tid = task->pid;
  out.pid = task->tgid;
  __builtin_memcpy(out.comm, task->comm, sizeof(out.comm));
  bpf_seq_write(ctx->meta->seq, &out, sizeof(out));
  return 0;
}
