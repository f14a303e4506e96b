// SPDX-License-Identifier: GPL-2.0
/* Accept owners: per listening socket of a watched process, the thread that
 * last called accept/accept4 on it, and whether more than one thread of
 * that process has (a socket passed to another process starts afresh).
 * What thread worker servers (HAProxy's `shards by-thread`) need for
 * connection steering and /proc cannot say: the threads share one fd table
 * and every epoll set. Recorded at syscall entry, not exit: an accept that
 * then fails with EAGAIN still tells which thread polls the socket, and the
 * entry needs no state carried to the exit. Keyed by the socket's inode,
 * the number /proc/net/tcp and fstat give the agent.
 *
 * Hook: tp_btf/sys_enter, for the reasons of work.bpf.c: fentry and kprobes
 * on the syscall functions are not on every kernel Locus runs on, the
 * per-syscall syscalls:sys_enter_X tracepoints need tracefs mounted and
 * build a perf record per event, and tp_btf has the current task typed, so
 * the file table is read with direct loads.
 *
 * Cost: every syscall of every task enters the program; one that is not
 * accept/accept4 returns after one compare, an accept of a process not
 * watched after one hash lookup, a watched one adds the fd table walk and
 * one or two operations on `owners`. Measured with BPF_ENABLE_STATS on 6.18
 * (2 vCPUs), ns per event: other syscalls 60-80 (the accounting floor is
 * ~60), an accept of a process not watched 130, of a watched one 300.
 * Attached only while the agent watches some process.
 */
// clang-format off
#include "common.bpf.h" /* first: brings vmlinux.h */
#include "locus/accepts.h"
// clang-format on

char LICENSE[] SEC("license") = "GPL";

/* Syscall numbers (native ABI only: a 32-bit compat task's numbers differ;
 * the processes watched are 64-bit). */
#if defined(__TARGET_ARCH_x86)
#define NR_ACCEPT 43
#define NR_ACCEPT4 288
#define SYSCALL_ARG0(regs) ((regs)->di)
#elif defined(__TARGET_ARCH_arm64)
/* asm-generic/unistd.h */
#define NR_ACCEPT 202
#define NR_ACCEPT4 242
/* regs[0] becomes the return value; orig_x0 keeps the argument. */
#define SYSCALL_ARG0(regs) ((regs)->orig_x0)
#else
#error "accepts.bpf.c: syscall numbers for this architecture are missing"
#endif

#define LOCUS_S_IFMT 00170000
#define LOCUS_S_IFSOCK 0140000

/* tgid -> 1: the processes whose accepts are recorded. Filled by the
 * agent. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, LOCUS_ACCEPTS_MAX_PROCESSES);
  __type(key, __u32);
  __type(value, __u8);
} watched SEC(".maps");

/* Listening socket inode -> who accepts on it. Created here, read and
 * forgotten (deleted) by the agent. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, LOCUS_ACCEPTS_MAX_SOCKETS);
  __type(key, __u64);
  __type(value, struct locus_accept_owner);
} owners SEC(".maps");

/* The inode number of `fd` of the current task if it is a socket, else 0
 * (no socket has inode 0): its file table as the syscall is about to see it
 * (current->files->fdt->fd[fd]->f_inode). The typed part is read with
 * direct (fault-safe) loads, the array element and what it points to, which
 * BTF does not type, with probe reads. The table may be resized under us: a
 * stale read at worst misses or misplaces one call. */
static __always_inline __u64 socket_inode(long fd) {
  if (fd < 0) return 0;
  struct fdtable *fdt = bpf_get_current_task_btf()->files->fdt;
  if (!fdt || (__u64)fd >= fdt->max_fds) return 0;
  struct file **fds = fdt->fd;
  struct file *file = 0;
  if (bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]) || !file) return 0;
  struct inode *inode = BPF_CORE_READ(file, f_inode);
  if (!inode) return 0;
  umode_t mode = BPF_CORE_READ(inode, i_mode);
  if ((mode & LOCUS_S_IFMT) != LOCUS_S_IFSOCK) return 0;
  return BPF_CORE_READ(inode, i_ino);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(accept_enter, struct pt_regs *regs, long id) {
  if (id != NR_ACCEPT && id != NR_ACCEPT4) return 0;
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  __u32 tgid = pid_tgid >> 32;
  __u32 tid = (__u32)pid_tgid;
  if (!bpf_map_lookup_elem(&watched, &tgid)) return 0;
  __u64 ino = socket_inode((int)SYSCALL_ARG0(regs));
  if (!ino) return 0;
  struct locus_accept_owner *owner = bpf_map_lookup_elem(&owners, &ino);
  if (!owner) {
    struct locus_accept_owner first = {.tgid = tgid, .tid = tid};
    if (bpf_map_update_elem(&owners, &ino, &first, BPF_NOEXIST) == 0) return 0;
    /* Another thread's first call won the race (then it is shared), or the
     * map is full (then nothing is found). */
    owner = bpf_map_lookup_elem(&owners, &ino);
    if (!owner) return 0;
  }
  if (owner->tgid != tgid) {
    /* Another process now accepts on it: a reload's new worker process,
     * given its old one's sockets. Its own first thread owns it. */
    owner->tgid = tgid;
    owner->tid = tid;
    owner->shared = 0;
  } else if (owner->tid != tid) {
    /* Plain stores: the agent reads whole entries between ticks, and two
     * threads racing here both make it shared. */
    owner->tid = tid;
    owner->shared = 1;
  }
  return 0;
}
