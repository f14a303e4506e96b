// SPDX-License-Identifier: GPL-2.0
/* NUMA hinting-fault sensor. Two sources, preferred first:
 *  - fentry/task_numa_fault: every hinting fault, exact pages per memory node
 *    split local/remote by TNF_FAULT_LOCAL, in a tid-keyed LRU hash;
 *  - iter/task: a snapshot of the kernel's own per-task task->numa_faults
 *    (decayed weights), read through CO-RE, when fentry is unavailable.
 * The agent's last resort, /proc/PID/task/TID/sched, needs no BPF. */
// clang-format off
#include "common.bpf.h" /* first: brings vmlinux.h */
#include "locus/numa.h"
// clang-format on

char LICENSE[] SEC("license") = "GPL";

/* Load-time knob: the kernel's nr_node_ids (highest possible node + 1), the
 * stride of task->numa_faults. */
const volatile __u32 nr_node_ids = 1;

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, LOCUS_MAX_TASKS);
  __type(key, __u32);
  __type(value, struct locus_numa_fentry_task);
} fault_lru SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, LOCUS_NUMA_NR_DROPS);
  __type(key, __u32);
  __type(value, __u64);
} drops SEC(".maps");

SEC("fentry/task_numa_fault")
int BPF_PROG(fault_fentry, int last_cpupid, int mem_node, int pages,
             int flags) {
  /* One register, checked and then used: left to itself clang bounds a
   * sign-extended copy of the argument and indexes with another, and the
   * verifier (6.1, 6.12) rejects the program ("makes map_value pointer be out
   * of bounds"). Zero-extended once, before the barrier, so a negative
   * node fails the same check. */
  __u64 node = (__u32)mem_node;
  barrier_var(node);
  if (node >= LOCUS_MAX_NODES) {
    LOCUS_COUNT(drops, LOCUS_NUMA_DROP_NODE);
    return 0;
  }
  struct task_struct *task = bpf_get_current_task_btf();
  __u32 tid = task->pid;
  struct locus_numa_fentry_task *t = bpf_map_lookup_elem(&fault_lru, &tid);
  if (!t) {
    struct locus_numa_fentry_task init = {.tid = tid};
    init.pid = task->tgid;
    __builtin_memcpy(init.comm, task->comm, sizeof(init.comm));
    if (bpf_map_update_elem(&fault_lru, &tid, &init, BPF_NOEXIST) == 0)
      LOCUS_COUNT(drops, LOCUS_NUMA_LRU_INSERTS);
    t = bpf_map_lookup_elem(&fault_lru, &tid);
    if (!t) {
      LOCUS_COUNT(drops, LOCUS_NUMA_DROP_MAP);
      return 0;
    }
  }
  if (flags & LOCUS_TNF_FAULT_LOCAL)
    __sync_fetch_and_add(&t->local_pages[node], pages);
  else
    __sync_fetch_and_add(&t->remote_pages[node], pages);
  return 0;
}

/* task->numa_faults layout (kernel/sched/fair.c task_faults_idx):
 * [2 * (stat * nr_node_ids + nid) + priv], stat NUMA_MEM=0, NUMA_CPU=1. */
static __always_inline __u64 fault_slot(unsigned long *faults, __u32 stat,
                                        __u32 nid) {
  unsigned long v[2] = {};
  bpf_probe_read_kernel(&v, sizeof(v), faults + 2 * (stat * nr_node_ids + nid));
  return v[0] + v[1];
}

SEC("iter/task")
int dump_numa(struct bpf_iter__task *ctx) {
  struct task_struct *task = ctx->task;
  if (!task) return 0;
  unsigned long *faults = BPF_CORE_READ(task, numa_faults);
  if (!faults) return 0; /* never took a hinting fault */
  struct locus_numa_iter_task out = {};
  out.tid = task->pid;
  out.pid = task->tgid;
  __builtin_memcpy(out.comm, task->comm, sizeof(out.comm));
  __u32 n = nr_node_ids;
  if (n > LOCUS_MAX_NODES) n = LOCUS_MAX_NODES;
  for (__u32 nid = 0; nid < LOCUS_MAX_NODES; nid++) {
    if (nid >= n) break;
    out.mem_faults[nid] = fault_slot(faults, 0, nid);
    out.cpu_faults[nid] = fault_slot(faults, 1, nid);
  }
  out.remote = BPF_CORE_READ(task, numa_faults_locality[0]);
  out.local = BPF_CORE_READ(task, numa_faults_locality[1]);
  out.failed_migrations = BPF_CORE_READ(task, numa_faults_locality[2]);
  out.total_numa_faults = BPF_CORE_READ(task, total_numa_faults);
  out.preferred_nid = BPF_CORE_READ(task, numa_preferred_nid);
  bpf_seq_write(ctx->meta->seq, &out, sizeof(out));
  return 0;
}
