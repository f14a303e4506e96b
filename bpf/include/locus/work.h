/* ABI of bpf/work.bpf.c: per process (tgid), the bytes its successful send
 * syscalls on sockets returned and the connections it accepted, for the A/B
 * experiment's "work per CPU-second". Shared verbatim by the BPF program and
 * agent/sensors (which static_asserts the layout).
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

/* Value of `counters`: cumulative since the agent inserted the entry. */
struct locus_work_counts {
  __u64 bytes_sent; /* sum of the return values of socket sends */
  __u64 accepted;   /* successful accept/accept4 calls */
};

/* What a thread of a watched process is in the middle of (value of the
 * per-thread `pending` task storage between sys_enter and sys_exit; 0 when
 * none). */
enum locus_work_op {
  LOCUS_WORK_OP_SEND = 1,   /* a send syscall on a socket fd */
  LOCUS_WORK_OP_ACCEPT = 2, /* accept or accept4 */
};

#endif /* LOCUS_BPF_WORK_H_ */
