/* ABI of bpf/accepts.bpf.c: per listening socket (its inode), the thread of
 * a watched process that last called accept/accept4 on it, and whether
 * another thread did too. Shared verbatim by the BPF program and
 * agent/sensors (which static_asserts the layout).
 *
 * The agent fills `watched` (tgid -> 1); the program creates and updates the
 * `owners` entries; the agent reads them and deletes those it forgets. */
#ifndef LOCUS_BPF_ACCEPTS_H_
#define LOCUS_BPF_ACCEPTS_H_

/* BPF programs get __u32/__u64 from vmlinux.h, C++ from linux/types.h. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Processes watched at once (entries of `watched`). */
#define LOCUS_ACCEPTS_MAX_PROCESSES 4096
/* Listening sockets tracked (entries of `owners`); a socket first accepted
 * on while it is full is not recorded until the agent forgets some. */
#define LOCUS_ACCEPTS_MAX_SOCKETS 16384

/* Value of `owners`, keyed by the listening socket's inode (__u64). */
struct locus_accept_owner {
  __u32 tgid;   /* process of the thread that called last */
  __u32 tid;    /* the thread that called last */
  __u32 shared; /* 1 once a second thread of tgid has called accept on it */
  __u32 pad_;   /* explicit: the value is 16 bytes on both sides */
};

#endif /* LOCUS_BPF_ACCEPTS_H_ */
