/* Helpers shared by the Locus BPF programs. */
#ifndef LOCUS_BPF_COMMON_BPF_H_
#define LOCUS_BPF_COMMON_BPF_H_

/* vmlinux.h must come first: the libbpf headers use its kernel types. */
// clang-format off
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
// clang-format on

#include "locus/limits.h"

/* Where task_struct kept its CPU before 5.16 moved it into thread_info. */
struct task_struct___pre516 {
  unsigned int cpu;
} __attribute__((preserve_access_index));

/* task_cpu(p) through probe reads: works on any task pointer (raw_tp). */
static __always_inline int locus_task_cpu(struct task_struct *p) {
  if (bpf_core_field_exists(p->thread_info.cpu))
    return BPF_CORE_READ(p, thread_info.cpu);
  return BPF_CORE_READ((struct task_struct___pre516 *)p, cpu);
}

/* task_cpu(p) by direct load: BTF-typed pointers only (tp_btf, iter). */
static __always_inline int locus_task_cpu_btf(struct task_struct *p) {
  if (bpf_core_field_exists(p->thread_info.cpu)) return p->thread_info.cpu;
  return ((struct task_struct___pre516 *)p)->cpu;
}

/* i as an index into an array of `pow2` (a power of two) elements, or -1.
 * The barrier
 * stops clang from folding the check into a form the verifier cannot use as
 * a bound; the mask (a power of two) is the bound. */
static __always_inline int locus_index(__u32 i, __u32 pow2) {
  if (i >= pow2) return -1;
  asm volatile("" : "+r"(i));
  return i & (pow2 - 1);
}

static __always_inline int locus_cpu_slot(__u32 cpu) {
  return locus_index(cpu, LOCUS_MAX_CPUS);
}

/* Increments slot `idx` of a per-CPU u64 array of drop counters. */
#define LOCUS_COUNT(map, idx)                               \
  do {                                                      \
    __u32 locus_k_ = (idx);                                 \
    __u64 *locus_v_ = bpf_map_lookup_elem(&map, &locus_k_); \
    if (locus_v_) *locus_v_ += 1;                           \
  } while (0)

#endif /* LOCUS_BPF_COMMON_BPF_H_ */
