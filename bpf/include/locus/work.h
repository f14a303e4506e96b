/* ABI of bpf/work.bpf.c: per process (tgid), the bytes its successful send
 * syscalls on sockets returned and the connections it accepted, for the A/B
 * experiment's "work per CPU-second", and the requests it served with their
 * service times, for its per-arm latency. Shared verbatim by the BPF program
 * and agent/sensors (which static_asserts the layout).
 *
 * The agent fills `watched` (tgid -> 1) and puts a zeroed `counters` entry
 * for each watched process before it lists it there; the program only adds
 * to existing entries, so a process the agent has dropped is never
 * re-created by a syscall that was in flight. */
#ifndef LOCUS_BPF_WORK_H_
#define LOCUS_BPF_WORK_H_

/* BPF programs get __u32/__u64 from vmlinux.h, C++ from linux/types.h. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "locus/limits.h"

/* Processes one experiment may watch (entries of `watched` and `counters`). */
#define LOCUS_WORK_MAX_PROCESSES 4096

/* Requests' service times are counted in a log-linear histogram of
 * microseconds: below LOCUS_WORK_SUB, one bucket per microsecond; above,
 * LOCUS_WORK_SUB buckets per power of two, so a bucket is at most 1/16
 * (6.25 %) wide relative to its lower bound. Times of 2^(LOCUS_WORK_MAX_MSB
 * + 1) us (about 18 minutes) and more share the last bucket. The agent's
 * quantiles (policy/experiment_latency.h) invert exactly this layout. */
#define LOCUS_WORK_SUB_BITS 4
#define LOCUS_WORK_SUB (1 << LOCUS_WORK_SUB_BITS)
#define LOCUS_WORK_MAX_MSB 29
#define LOCUS_WORK_BUCKETS \
  ((LOCUS_WORK_MAX_MSB - LOCUS_WORK_SUB_BITS + 2) * LOCUS_WORK_SUB)

/* The bucket of a service time of `us` microseconds. No loops and no
 * builtins (BPF has no count-leading-zeros): the most significant bit by
 * halving. */
static inline __u32 locus_work_bucket(__u64 us) {
  if (us < LOCUS_WORK_SUB) return (__u32)us;
  __u64 v = us;
  __u32 msb = 0;
  if (v >> 32) {
    v >>= 32;
    msb += 32;
  }
  if (v >> 16) {
    v >>= 16;
    msb += 16;
  }
  if (v >> 8) {
    v >>= 8;
    msb += 8;
  }
  if (v >> 4) {
    v >>= 4;
    msb += 4;
  }
  if (v >> 2) {
    v >>= 2;
    msb += 2;
  }
  if (v >> 1) {
    msb += 1;
  }
  if (msb > LOCUS_WORK_MAX_MSB) return LOCUS_WORK_BUCKETS - 1;
  return (msb - LOCUS_WORK_SUB_BITS + 1) * LOCUS_WORK_SUB +
         (__u32)((us >> (msb - LOCUS_WORK_SUB_BITS)) & (LOCUS_WORK_SUB - 1));
}

/* Value of `counters`: cumulative since the agent inserted the entry. */
struct locus_work_counts {
  __u64 bytes_sent; /* sum of the return values of socket sends */
  __u64 accepted;   /* successful accept/accept4 calls */
  __u64 requests;   /* requests whose service time was recorded */
  /* requests per bucket of locus_work_bucket(service time in us) */
  __u64 service_us[LOCUS_WORK_BUCKETS];
};

/* What a thread of a watched process is in the middle of (the `op` of the
 * per-thread `pending` task storage between sys_enter and sys_exit; 0 when
 * none). */
enum locus_work_op {
  LOCUS_WORK_OP_SEND = 1,    /* a send syscall on a socket fd */
  LOCUS_WORK_OP_ACCEPT = 2,  /* accept or accept4 */
  LOCUS_WORK_OP_RECV = 3,    /* a read syscall on a socket fd */
  LOCUS_WORK_OP_CONNECT = 4, /* connect: the fd is a client's */
};

#endif /* LOCUS_BPF_WORK_H_ */
