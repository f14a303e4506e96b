// SPDX-License-Identifier: GPL-2.0
/* Work sensor of the A/B experiment: per watched process, the bytes its
 * successful send syscalls on sockets returned (write, writev, sendto,
 * sendmsg, sendfile: nginx answers with writev and sendfile) and its
 * successful accept/accept4 calls. Exactly what the syscalls returned, so it
 * matches nginx's own $bytes_sent; writes to files (the access log) are left
 * out by looking at the fd's inode type.
 *
 * Hooks: tp_btf/sys_enter and tp_btf/sys_exit. Not fentry/fexit or kprobes
 * on the syscall functions (neither exists on every kernel Locus runs on),
 * nor the per-syscall syscalls:sys_enter_X tracepoints (they need tracefs
 * mounted to attach, and build a perf record per event). tp_btf over raw_tp
 * because its pt_regs pointer is typed: the syscall number at exit is a
 * plain load, not a probe read, and every syscall of every task passes
 * through the exit hook; it also has the current task typed, for task
 * storage and the file table.
 *
 * Cost: a syscall that is none of the seven returns after one compare on
 * entry and one load and compare on exit; one of them made by a process not
 * watched pays one hash lookup on entry and a task-storage look on exit.
 * Measured with kernel.bpf_stats_enabled=1 on 6.18 (2 vCPUs), ns per event
 * entry/exit: empty programs 61/24 (the accounting floor), other syscalls
 * 65/28, a send of a process not watched 140/72, of a watched one 275/96. */
// clang-format off
#include "common.bpf.h" /* first: brings vmlinux.h */
#include "locus/work.h"
// clang-format on

char LICENSE[] SEC("license") = "GPL";

/* Syscall numbers (native ABI only: a 32-bit compat task's numbers differ,
 * and its sends would be misread; the processes watched are 64-bit). */
#if defined(__TARGET_ARCH_x86)
#define NR_WRITE 1
#define NR_WRITEV 20
#define NR_SENDFILE 40
#define NR_ACCEPT 43
#define NR_SENDTO 44
#define NR_SENDMSG 46
#define NR_ACCEPT4 288
/* The first argument, and the syscall number as the exit path sees it. */
#define SYSCALL_ARG0(regs) ((regs)->di)
#define SYSCALL_NR(regs) ((long)(regs)->orig_ax)
#elif defined(__TARGET_ARCH_arm64)
/* asm-generic/unistd.h; sendfile64 is sendfile on 64-bit ABIs. */
#define NR_WRITE 64
#define NR_WRITEV 66
#define NR_SENDFILE 71
#define NR_ACCEPT 202
#define NR_SENDTO 206
#define NR_SENDMSG 211
#define NR_ACCEPT4 242
/* regs[0] becomes the return value; orig_x0 keeps the argument. */
#define SYSCALL_ARG0(regs) ((regs)->orig_x0)
#define SYSCALL_NR(regs) ((long)(regs)->syscallno)
#else
#error "work.bpf.c: syscall numbers for this architecture are missing"
#endif

#define LOCUS_S_IFMT 00170000
#define LOCUS_S_IFSOCK 0140000

/* tgid -> 1: the processes counted. Filled by the agent. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, LOCUS_WORK_MAX_PROCESSES);
  __type(key, __u32);
  __type(value, __u8);
} watched SEC(".maps");

/* tgid -> counts. The agent creates each entry (zeroed) before it watches
 * the process; the program only adds. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, LOCUS_WORK_MAX_PROCESSES);
  __type(key, __u32);
  __type(value, struct locus_work_counts);
} counters SEC(".maps");

/* Per thread (tid): the enum locus_work_op of the counted syscall it is in,
 * 0 outside one. Task storage rather than a tid-keyed hash: created at a
 * watched thread's first counted syscall, then only written (no insert and
 * delete per syscall: the exit hook costs ~60 ns less here), and freed with
 * the thread, so one killed inside a syscall leaks nothing. */
struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, __u32);
} pending SEC(".maps");

static __always_inline __u32 op_of(long nr) {
  switch (nr) {
    case NR_WRITE:
    case NR_WRITEV:
    case NR_SENDTO:
    case NR_SENDMSG:
    case NR_SENDFILE: /* out_fd is the first argument */
      return LOCUS_WORK_OP_SEND;
    case NR_ACCEPT:
    case NR_ACCEPT4:
      return LOCUS_WORK_OP_ACCEPT;
  }
  return 0;
}

/* Whether `fd` of the current task is a socket: its file table as the
 * syscall is about to see it (current->files->fdt->fd[fd]->f_inode). The
 * typed part is read with direct (fault-safe) loads, the array element and
 * what it points to, which BTF does not type, with probe reads. The table
 * may be resized under us: a stale read at worst misclassifies one call. */
static __always_inline bool is_socket(long fd) {
  if (fd < 0) return false;
  struct fdtable *fdt = bpf_get_current_task_btf()->files->fdt;
  if (!fdt || (__u64)fd >= fdt->max_fds) return false;
  struct file **fds = fdt->fd;
  struct file *file = 0;
  if (bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]) || !file)
    return false;
  umode_t mode = BPF_CORE_READ(file, f_inode, i_mode);
  return (mode & LOCUS_S_IFMT) == LOCUS_S_IFSOCK;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(work_enter, struct pt_regs *regs, long id) {
  __u32 op = op_of(id);
  if (!op) return 0;
  __u32 tgid = bpf_get_current_pid_tgid() >> 32;
  if (!bpf_map_lookup_elem(&watched, &tgid)) return 0;
  /* accept fails on anything but a socket: no need to look. */
  if (op == LOCUS_WORK_OP_SEND && !is_socket((int)SYSCALL_ARG0(regs))) return 0;
  __u32 *slot = bpf_task_storage_get(&pending, bpf_get_current_task_btf(), 0,
                                     BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (slot) *slot = op;
  return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(work_exit, struct pt_regs *regs, long ret) {
  if (!op_of(SYSCALL_NR(regs))) return 0;
  __u32 *op = bpf_task_storage_get(&pending, bpf_get_current_task_btf(), 0, 0);
  if (!op || !*op) return 0;
  __u32 kind = *op;
  *op = 0;
  if (ret < 0 || (kind == LOCUS_WORK_OP_SEND && ret == 0)) return 0;
  __u32 tgid = bpf_get_current_pid_tgid() >> 32;
  struct locus_work_counts *c = bpf_map_lookup_elem(&counters, &tgid);
  if (!c) return 0; /* dropped by the agent meanwhile */
  if (kind == LOCUS_WORK_OP_SEND)
    __sync_fetch_and_add(&c->bytes_sent, ret);
  else
    __sync_fetch_and_add(&c->accepted, 1);
  return 0;
}
