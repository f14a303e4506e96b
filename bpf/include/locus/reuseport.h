/* ABI of bpf/reuseport.bpf.c: steers each new TCP connection of a reuseport
 * group (nginx's per-worker listening sockets) to a worker socket on the NUMA
 * node of the CPU that handles its SYN. Shared verbatim by the BPF program and
 * the agent (which static_asserts the layout).
 *
 * The agent fills three maps: `socks`, the group's socket array (one slot per
 * worker socket); `cpu_node`, the node of each CPU (so fixture topologies work
 * as well as the real one); and `nodes`, per node the slots of the sockets of
 * workers homed there and the share of new connections to leave to the
 * kernel's hash over every worker (spill). The program never drops: whatever
 * it cannot steer goes to the kernel's hash, and each outcome is counted per
 * node in `counters`. */
#ifndef LOCUS_BPF_REUSEPORT_H_
#define LOCUS_BPF_REUSEPORT_H_

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "locus/limits.h"

/* Slots of one group's socket array. */
#define LOCUS_REUSEPORT_MAX_SOCKETS 1024
/* Worker sockets one node may list (a power of two). */
#define LOCUS_REUSEPORT_NODE_SLOTS 256
/* spill_permille is out of this many. */
#define LOCUS_REUSEPORT_SPILL_SCALE 1000

/* What happened to one new connection; counters are per node and path. */
enum locus_reuseport_path {
  LOCUS_REUSEPORT_LOCAL = 0,    /* a socket of its node's workers */
  LOCUS_REUSEPORT_SPILLED = 1,  /* its node is over its share: kernel's hash */
  LOCUS_REUSEPORT_FALLBACK = 2, /* no socket of its node could take it: hash */
  LOCUS_REUSEPORT_MIGRATED = 3, /* a request queued on a closing listener */
  LOCUS_REUSEPORT_NR_PATHS = 4,
};

/* Counter rows: one per node, then one for CPUs of no known node. */
#define LOCUS_REUSEPORT_COUNTER_ROWS (LOCUS_MAX_NODES + 1)

struct locus_reuseport_node {
  __u32 count;          /* entries of slots[] in use */
  __u32 spill_permille; /* of new connections on this node, left to the hash */
  __u32 slots[LOCUS_REUSEPORT_NODE_SLOTS]; /* indices into `socks` */
};

#endif /* LOCUS_BPF_REUSEPORT_H_ */
