// SPDX-License-Identifier: GPL-2.0
/* Scheduler sensor: per-task migrations (and how many crossed a NUMA node),
 * on-CPU time by node, and per-CPU busy time.
 *
 * Two attachments, chosen by the agent's feature probe:
 *  - tp_btf (preferred): the hot hooks touch no per-task state. sched_switch
 *    counts into a per-CPU slot and adds one ending slice in
 *    sample_mask + 1 to it; sched_migrate_task does work only for a
 *    cross-node move (then in task storage), and is not loaded on a
 *    single-node host. Migration counts and runtime come from the kernel's
 *    own se.nr_migrations/se.sum_exec_runtime, read for every task by
 *    iter/task, which also charges the runtime since the last cross-node
 *    move to the node the task is on now.
 *  - raw_tp (fallback, no tp_btf/task storage/iterators): every migration
 *    updates a tid-keyed LRU hash read by map iteration.
 * Both also note which processes changed their name (task_rename). */
// clang-format off
#include "common.bpf.h" /* first: brings vmlinux.h */
#include "locus/sched.h"
#include "locus/softirq.h"
// clang-format on

char LICENSE[] SEC("license") = "GPL";

/* Load-time knob: CPU -> node. */
const volatile __u32 cpu_node[LOCUS_MAX_CPUS] = {};
/* Per-CPU slots, read by the agent through the skeleton's mmap of .bss; it
 * sets each slot's sample_mask before load. */
struct locus_sched_cpu cpu_slots[LOCUS_MAX_CPUS] = {};

struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct locus_sched_task_state);
} task_state SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, LOCUS_MAX_TASKS);
  __type(key, __u32);
  __type(value, struct locus_sched_task);
} task_lru SEC(".maps");

/* Processes (tgid) whose name may have changed since the agent last drained
 * this set: an exec, or a new comm for the leader (prctl, a write to its
 * comm file). With it the agent need not re-read every process's comm each
 * scan to find new targets. A rename with no room here is counted
 * (LOCUS_SCHED_RENAMED_LOST) and the agent then re-reads every name. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, LOCUS_MAX_RENAMED);
  __type(key, __u32);
  __type(value, __u8);
} renamed SEC(".maps");

/* The softirq sensor's task storage (softirq.bpf.c's task_stats): the agent
 * hands this object that map before load, so dump_sched emits both sensors'
 * figures in one walk (each walk costs a pid lookup per thread). */
struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct locus_softirq_task);
} softirq_tasks SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, LOCUS_SCHED_NR_DROPS);
  __type(key, __u32);
  __type(value, __u64);
} drops SEC(".maps");

static __always_inline __u32 node_of(int cpu) {
  int slot = locus_cpu_slot((__u32)cpu);
  return slot < 0 ? 0 : cpu_node[slot];
}

/* Fair-class tasks (SCHED_NORMAL, SCHED_BATCH, SCHED_IDLE) have prio >=
 * MAX_RT_PRIO; RT and deadline tasks, and fair ones boosted by priority
 * inheritance (which then run in the RT class), below. Only the fair class
 * keeps prev_sum_exec_runtime at pick time. prio shares a cache line with
 * fields the context switch has just touched, unlike policy or pid. (Tasks of
 * a sched_ext scheduler, 6.12+, also have fair prios: their busy time would
 * be overstated.) */
#define LOCUS_MAX_RT_PRIO 100

/* Counts a switch on this CPU; returns its slot when this one is sampled
 * (then the caller reads prev), else NULL. */
static __always_inline struct locus_sched_cpu *count_switch(void) {
  int slot = locus_cpu_slot(bpf_get_smp_processor_id());
  if (slot < 0) {
    LOCUS_COUNT(drops, LOCUS_SCHED_DROP_CPU);
    return 0;
  }
  struct locus_sched_cpu *c = &cpu_slots[slot];
  if (++c->switches & c->sample_mask) return 0;
  c->sampled_switches++;
  return c;
}

/* The idle task needs no test: its se is zeroed at init and never
 * accounted, so its slice reads as 0. */
static __always_inline void time_switch(struct locus_sched_cpu *c, int prio,
                                        __u64 sum, __u64 prev_sum) {
  if (prio >= LOCUS_MAX_RT_PRIO)
    c->sampled_busy_ns += sum - prev_sum;
  else
    c->sampled_untimed++;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_btf, bool preempt, struct task_struct *prev) {
  struct locus_sched_cpu *c = count_switch();
  if (c)
    time_switch(c, prev->prio, prev->se.sum_exec_runtime,
                prev->se.prev_sum_exec_runtime);
  return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(migrate_btf, struct task_struct *p, int dest_cpu) {
  __u32 from = node_of(locus_task_cpu_btf(p));
  if (from == node_of(dest_cpu)) return 0; /* the common case: no work */
  struct locus_sched_task_state *st =
      bpf_task_storage_get(&task_state, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!st) {
    LOCUS_COUNT(drops, LOCUS_SCHED_DROP_STORAGE);
    return 0;
  }
  st->cross_node_migrations++;
  __u64 sum = p->se.sum_exec_runtime;
  int n = locus_index(from, LOCUS_MAX_NODES);
  if (n >= 0)
    st->runtime_ns[n] += sum - st->runtime_mark_ns;
  else
    LOCUS_COUNT(drops, LOCUS_SCHED_DROP_NODE);
  st->runtime_mark_ns = sum;
  return 0;
}

/* Emits one locus_sched_task per task (tp_btf path). */
SEC("iter/task")
int dump_sched(struct bpf_iter__task *ctx) {
  struct task_struct *task = ctx->task;
  if (!task) return 0;
  struct locus_sched_task out = {};
  out.tid = task->pid;
  out.pid = task->tgid;
  __builtin_memcpy(out.comm, task->comm, sizeof(out.comm));
  out.cpu = locus_task_cpu_btf(task);
  out.migrations = task->se.nr_migrations;
  __u64 mark = 0;
  struct locus_sched_task_state *st =
      bpf_task_storage_get(&task_state, task, 0, 0);
  if (st) {
    out.cross_node_migrations = st->cross_node_migrations;
    __builtin_memcpy(out.runtime_ns, st->runtime_ns, sizeof(out.runtime_ns));
    mark = st->runtime_mark_ns;
  }
  int n = locus_index(node_of(out.cpu), LOCUS_MAX_NODES);
  if (n >= 0) out.runtime_ns[n] += task->se.sum_exec_runtime - mark;
  out.runtime_mark_ns = mark;
  struct locus_softirq_task *sq =
      bpf_task_storage_get(&softirq_tasks, task, 0, 0);
  if (sq) {
    out.net_rx_ns = sq->net_rx_ns;
    out.softirq_ns = sq->softirq_ns;
  }
  bpf_seq_write(ctx->meta->seq, &out, sizeof(out));
  return 0;
}

/* A process's name is its leader's (and exec makes the exec'ing thread the
 * leader before naming it): another thread's own name changes nothing. */
static __always_inline void note_rename(__u32 pid, __u32 tgid) {
  if (pid != tgid) return;
  __u8 one = 1;
  if (bpf_map_update_elem(&renamed, &tgid, &one, BPF_ANY))
    LOCUS_COUNT(drops, LOCUS_SCHED_RENAMED_LOST);
}

SEC("tp_btf/task_rename")
int BPF_PROG(rename_btf, struct task_struct *task) {
  note_rename(task->pid, task->tgid);
  return 0;
}

/* raw_tp fallback: untyped task pointers, read through probe reads. */

SEC("raw_tp/task_rename")
int BPF_PROG(rename_raw, struct task_struct *task) {
  note_rename(BPF_CORE_READ(task, pid), BPF_CORE_READ(task, tgid));
  return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(switch_raw, bool preempt, struct task_struct *prev) {
  struct locus_sched_cpu *c = count_switch();
  if (c)
    time_switch(c, BPF_CORE_READ(prev, prio),
                BPF_CORE_READ(prev, se.sum_exec_runtime),
                BPF_CORE_READ(prev, se.prev_sum_exec_runtime));
  return 0;
}

SEC("raw_tp/sched_migrate_task")
int BPF_PROG(migrate_raw, struct task_struct *p, int dest_cpu) {
  __u32 tid = BPF_CORE_READ(p, pid);
  struct locus_sched_task *t = bpf_map_lookup_elem(&task_lru, &tid);
  if (!t) {
    struct locus_sched_task init = {.tid = tid, .cpu = -1};
    init.pid = BPF_CORE_READ(p, tgid);
    BPF_CORE_READ_STR_INTO(&init.comm, p, comm);
    if (bpf_map_update_elem(&task_lru, &tid, &init, BPF_NOEXIST) == 0)
      LOCUS_COUNT(drops, LOCUS_SCHED_LRU_INSERTS);
    t = bpf_map_lookup_elem(&task_lru, &tid);
    if (!t) {
      LOCUS_COUNT(drops, LOCUS_SCHED_DROP_STORAGE);
      return 0;
    }
  }
  __u32 from = node_of(locus_task_cpu(p));
  __u64 sum = BPF_CORE_READ(p, se.sum_exec_runtime);
  t->migrations++;
  t->cpu = dest_cpu;
  if (from != node_of(dest_cpu)) t->cross_node_migrations++;
  int n = locus_index(from, LOCUS_MAX_NODES);
  if (n >= 0)
    t->runtime_ns[n] += sum - t->runtime_mark_ns;
  else
    LOCUS_COUNT(drops, LOCUS_SCHED_DROP_NODE);
  t->runtime_mark_ns = sum;
  return 0;
}
