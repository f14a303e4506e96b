// SPDX-License-Identifier: GPL-2.0
/* Work sensor of the A/B experiment: per watched process, the bytes its
 * successful send syscalls on sockets returned (write, writev, sendto,
 * sendmsg, sendfile: nginx answers with writev and sendfile), its
 * successful accept/accept4 calls, and the requests it served with a
 * histogram of their service times, for the per-arm latency. Exactly what
 * the syscalls returned, so it matches nginx's own $bytes_sent; writes to
 * files (the access log) are left out by looking at the fd's inode type.
 *
 * A request, here, is what one connection (tgid, fd) does from the first
 * byte read to the last byte sent before it reads again: it starts at a
 * successful socket read (read, readv, recvfrom, recvmsg; not MSG_PEEK) on a
 * connection that is idle or was sending, and ends, when the next one
 * starts or the fd is closed, at its last successful send. No server module
 * and no protocol parsing, hence: requests pipelined and read together count
 * as one; on HTTP/2 or any multiplexed connection the figure is a busy
 * period, not a request; the time a response waits in the socket buffer
 * after its last send is not in it. Connections the process opened itself
 * (connect, or a first send before any read: an upstream, a resolver) are
 * clients, never measured; one already open when watching began is taken
 * as served from its first read on.
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
 * Cost: a syscall that is none of ours returns after one compare on
 * entry and one load and compare on exit; one of them made by a process not
 * watched pays one hash lookup on entry and a task-storage look on exit.
 * Measured with kernel.bpf_stats_enabled=1 on 6.18 (2 vCPUs), ns per event
 * entry/exit: empty programs 61/24 (the accounting floor), other syscalls
 * 65/28, a send of a process not watched 140/72, of a watched one 275/96.
 * Reads, measured so on 6.18.44 (2 vCPUs, builds running beside it:
 * build/tests/bench/locus_bench_work_read, nine runs of a million 1-byte
 * socket reads): other syscalls 58-70/25-32, a read of a process not
 * watched 116-150/60-74, of a watched one in the middle of a request (one
 * more hash lookup at exit) 227-357/100-131. A thread of a process watched
 * earlier keeps its task storage: its exits cost 106-152 until it ends. */
// clang-format off
#include "common.bpf.h" /* first: brings vmlinux.h */
#include "locus/work.h"
// clang-format on

char LICENSE[] SEC("license") = "GPL";

/* Syscall numbers (native ABI only: a 32-bit compat task's numbers differ,
 * and its sends would be misread; the processes watched are 64-bit). */
#if defined(__TARGET_ARCH_x86)
#define NR_READ 0
#define NR_WRITE 1
#define NR_CLOSE 3
#define NR_READV 19
#define NR_WRITEV 20
#define NR_SENDFILE 40
#define NR_CONNECT 42
#define NR_ACCEPT 43
#define NR_SENDTO 44
#define NR_RECVFROM 45
#define NR_SENDMSG 46
#define NR_RECVMSG 47
#define NR_ACCEPT4 288
/* The arguments, and the syscall number as the exit path sees it. */
#define SYSCALL_ARG0(regs) ((regs)->di)
#define SYSCALL_ARG2(regs) ((regs)->dx)
#define SYSCALL_ARG3(regs) ((regs)->r10)
#define SYSCALL_NR(regs) ((long)(regs)->orig_ax)
#elif defined(__TARGET_ARCH_arm64)
/* asm-generic/unistd.h; sendfile64 is sendfile on 64-bit ABIs. */
#define NR_CLOSE 57
#define NR_READ 63
#define NR_WRITE 64
#define NR_READV 65
#define NR_WRITEV 66
#define NR_SENDFILE 71
#define NR_ACCEPT 202
#define NR_CONNECT 203
#define NR_SENDTO 206
#define NR_RECVFROM 207
#define NR_SENDMSG 211
#define NR_RECVMSG 212
#define NR_ACCEPT4 242
/* regs[0] becomes the return value; orig_x0 keeps the argument. */
#define SYSCALL_ARG0(regs) ((regs)->orig_x0)
#define SYSCALL_ARG2(regs) ((regs)->regs[2])
#define SYSCALL_ARG3(regs) ((regs)->regs[3])
#define SYSCALL_NR(regs) ((long)(regs)->syscallno)
#else
#error "work.bpf.c: syscall numbers for this architecture are missing"
#endif

#define LOCUS_S_IFMT 00170000
#define LOCUS_S_IFSOCK 0140000
#define LOCUS_MSG_PEEK 2

/* close(2): handled at entry (the state to drop is known before the fd is
 * gone), so never a pending op; not in enum locus_work_op. */
#define OP_CLOSE 16

/* tgid -> 1: the processes counted. Filled by the agent. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, LOCUS_WORK_MAX_PROCESSES);
  __type(key, __u32);
  __type(value, __u8);
} watched SEC(".maps");

/* tgid -> counts. The agent creates each entry (zeroed) before it watches
 * the process; the program only adds. Not preallocated: a value is 3.5 KB
 * with the histogram, and room for every possible process would pin 14 MB
 * where an experiment watches a handful (tp_btf programs may use run-time
 * allocated hashes, and this one is only looked up here). */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, LOCUS_WORK_MAX_PROCESSES);
  __type(key, __u32);
  __type(value, struct locus_work_counts);
} counters SEC(".maps");

/* Per thread (tid): the enum locus_work_op of the counted syscall it is in
 * (0 outside one) and its fd, which the exit hook needs and no longer has.
 * Task storage rather than a tid-keyed hash: created at a watched thread's
 * first counted syscall, then only written (no insert and delete per
 * syscall: the exit hook costs ~60 ns less here), and freed with the
 * thread, so one killed inside a syscall leaks nothing. */
struct pending_op {
  __u32 op;
  __s32 fd;
};

struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct pending_op);
} pending SEC(".maps");

/* Where a connection is in its request cycle. */
enum conn_phase {
  CONN_IDLE = 0,    /* accepted, nothing read yet (a greeting sent maybe) */
  CONN_READING = 1, /* a request started at start_ns */
  CONN_SENDING = 2, /* its response is going out; last byte at last_send_ns */
  CONN_CLIENT = 3,  /* opened by the process itself: not measured */
};

struct conn_key {
  __u32 tgid;
  __s32 fd;
};

struct conn {
  __u64 start_ns;
  __u64 last_send_ns;
  __u32 phase;
  __u32 pad;
};

/* (tgid, fd) -> the request in progress on that connection. LRU because
 * not every end is seen (close_range, dup2 over the fd, a process that
 * exits or stops being watched): the entries forgotten first are the
 * connections idle longest, and losing one loses at most its last request.
 * 65536 covers, e.g., 16 workers holding 4096 keep-alive connections each;
 * LRU maps are preallocated, about 80 bytes an entry (5 MB), and exist only
 * while an experiment runs. */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);
  __type(key, struct conn_key);
  __type(value, struct conn);
} conns SEC(".maps");

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
    case NR_READ:
    case NR_READV:
    case NR_RECVFROM:
    case NR_RECVMSG:
      return LOCUS_WORK_OP_RECV;
    case NR_CONNECT:
      return LOCUS_WORK_OP_CONNECT;
    case NR_CLOSE:
      return OP_CLOSE;
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

/* A read that only looks (MSG_PEEK: nginx checks a connection that way
 * while an upstream works) starts nothing. */
static __always_inline bool peeks(struct pt_regs *regs, long nr) {
  if (nr == NR_RECVFROM) return SYSCALL_ARG3(regs) & LOCUS_MSG_PEEK;
  if (nr == NR_RECVMSG) return SYSCALL_ARG2(regs) & LOCUS_MSG_PEEK;
  return false;
}

/* One request served in `ns`: counted with its bucket. Atomic adds: the
 * process's threads share the entry. */
static __always_inline void record(__u32 tgid, __u64 start_ns, __u64 end_ns) {
  if (end_ns < start_ns) return;
  struct locus_work_counts *c = bpf_map_lookup_elem(&counters, &tgid);
  if (!c) return;
  __u32 bucket = locus_work_bucket((end_ns - start_ns) / 1000);
  /* The bucket is below the bound by construction; the verifier wants it
   * checked, on the register it indexes with. */
  asm volatile("" : "+r"(bucket));
  if (bucket >= LOCUS_WORK_BUCKETS) return;
  __sync_fetch_and_add(&c->service_us[bucket], 1);
  __sync_fetch_and_add(&c->requests, 1);
}

static __always_inline void on_recv(__u32 tgid, int fd) {
  struct conn_key key = {.tgid = tgid, .fd = fd};
  struct conn *c = bpf_map_lookup_elem(&conns, &key);
  if (!c) {
    struct conn fresh = {.start_ns = bpf_ktime_get_ns(), .phase = CONN_READING};
    bpf_map_update_elem(&conns, &key, &fresh, BPF_NOEXIST);
    return;
  }
  if (c->phase == CONN_READING || c->phase == CONN_CLIENT) return;
  /* The previous response was sent in full: its request ends there. */
  if (c->phase == CONN_SENDING) record(tgid, c->start_ns, c->last_send_ns);
  c->start_ns = bpf_ktime_get_ns();
  c->phase = CONN_READING;
}

static __always_inline void on_send(__u32 tgid, int fd) {
  struct conn_key key = {.tgid = tgid, .fd = fd};
  struct conn *c = bpf_map_lookup_elem(&conns, &key);
  if (!c) {
    /* It spoke first: the process's own client connection. */
    struct conn client = {.phase = CONN_CLIENT};
    bpf_map_update_elem(&conns, &key, &client, BPF_NOEXIST);
    return;
  }
  if (c->phase != CONN_READING && c->phase != CONN_SENDING) return;
  c->last_send_ns = bpf_ktime_get_ns();
  c->phase = CONN_SENDING;
}

static __always_inline void set_phase(__u32 tgid, int fd, __u32 phase) {
  struct conn_key key = {.tgid = tgid, .fd = fd};
  struct conn fresh = {.phase = phase};
  bpf_map_update_elem(&conns, &key, &fresh, BPF_ANY);
}

/* The fd is going away: a response fully sent is its request's end. */
static __always_inline void on_close(__u32 tgid, int fd) {
  struct conn_key key = {.tgid = tgid, .fd = fd};
  struct conn *c = bpf_map_lookup_elem(&conns, &key);
  if (!c) return;
  if (c->phase == CONN_SENDING) record(tgid, c->start_ns, c->last_send_ns);
  bpf_map_delete_elem(&conns, &key);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(work_enter, struct pt_regs *regs, long id) {
  __u32 op = op_of(id);
  if (!op) return 0;
  __u32 tgid = bpf_get_current_pid_tgid() >> 32;
  if (!bpf_map_lookup_elem(&watched, &tgid)) return 0;
  int fd = (int)SYSCALL_ARG0(regs);
  if (op == OP_CLOSE) {
    on_close(tgid, fd);
    return 0;
  }
  /* accept and connect fail on anything but a socket: no need to look. */
  if (op == LOCUS_WORK_OP_SEND && !is_socket(fd)) return 0;
  if (op == LOCUS_WORK_OP_RECV && (peeks(regs, id) || !is_socket(fd))) return 0;
  struct pending_op *slot = bpf_task_storage_get(
      &pending, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (slot) {
    slot->op = op;
    slot->fd = fd;
  }
  return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(work_exit, struct pt_regs *regs, long ret) {
  __u32 nr_op = op_of(SYSCALL_NR(regs));
  if (!nr_op || nr_op == OP_CLOSE) return 0;
  struct pending_op *p =
      bpf_task_storage_get(&pending, bpf_get_current_task_btf(), 0, 0);
  if (!p || !p->op) return 0;
  __u32 kind = p->op;
  int fd = p->fd;
  p->op = 0;
  __u32 tgid = bpf_get_current_pid_tgid() >> 32;
  if (kind == LOCUS_WORK_OP_CONNECT) {
    /* Even one still in progress (EINPROGRESS) or failed: the fd is a
     * client's either way. */
    set_phase(tgid, fd, CONN_CLIENT);
    return 0;
  }
  if (ret < 0 || (kind != LOCUS_WORK_OP_ACCEPT && ret == 0)) return 0;
  if (kind == LOCUS_WORK_OP_RECV) {
    on_recv(tgid, fd);
    return 0;
  }
  struct locus_work_counts *c = bpf_map_lookup_elem(&counters, &tgid);
  if (!c) return 0; /* dropped by the agent meanwhile */
  if (kind == LOCUS_WORK_OP_SEND) {
    __sync_fetch_and_add(&c->bytes_sent, ret);
    on_send(tgid, fd);
  } else {
    __sync_fetch_and_add(&c->accepted, 1);
    /* A new connection on a reused fd number: whatever was kept for the
     * old one is stale. */
    set_phase(tgid, (int)ret, CONN_IDLE);
  }
  return 0;
}
