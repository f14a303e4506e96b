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
 * node in `counters`.
 *
 * During an A/B experiment the agent also fills `arms`: row
 * LOCUS_REUSEPORT_ARM_CONTROL lists the control workers' sockets, its
 * spill_permille holding the share of every new connection they are to take
 * out of LOCUS_REUSEPORT_ARM_SCALE (their share of the workers, C/(C+T));
 * row LOCUS_REUSEPORT_ARM_TREATED lists every treated socket (those of the
 * node rows). A new connection goes to the control arm with that
 * probability, there to a control socket by hash; the rest is steered by
 * node, and what would have gone to the kernel's hash over every socket
 * (spill, no socket of the node could take it) goes to a treated socket by
 * hash instead: the kernel's hash would also hit control sockets and skew
 * the arms' shares. Requests migrating from a closing listener are steered
 * by node as ever. Both rows empty: no experiment, the program as above. */
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
/* The control arm's share is out of this many (finer than per mille: one
 * control worker of 256 is 3906, not 4 per mille, 2.4 % too many). */
#define LOCUS_REUSEPORT_ARM_SCALE 1000000

/* What happened to one new connection; counters are per node and path. */
enum locus_reuseport_path {
  LOCUS_REUSEPORT_LOCAL = 0,    /* a socket of its node's workers */
  LOCUS_REUSEPORT_SPILLED = 1,  /* its node is over its share: hash */
  LOCUS_REUSEPORT_FALLBACK = 2, /* no socket of its node could take it: hash */
  LOCUS_REUSEPORT_MIGRATED = 3, /* a request queued on a closing listener */
  LOCUS_REUSEPORT_CONTROL = 4,  /* an experiment's control arm, by hash */
  LOCUS_REUSEPORT_NR_PATHS = 5,
};

/* Counter rows: one per node, then one for CPUs of no known node. */
#define LOCUS_REUSEPORT_COUNTER_ROWS (LOCUS_MAX_NODES + 1)

/* Rows of `arms`. */
#define LOCUS_REUSEPORT_ARM_CONTROL 0
#define LOCUS_REUSEPORT_ARM_TREATED 1
#define LOCUS_REUSEPORT_NR_ARMS 2

struct locus_reuseport_node {
  __u32 count; /* entries of slots[] in use */
  /* Of new connections on this node, left to the hash; in the control row
   * of `arms`, that arm's share out of LOCUS_REUSEPORT_ARM_SCALE. */
  __u32 spill_permille;
  __u32 slots[LOCUS_REUSEPORT_NODE_SLOTS]; /* indices into `socks` */
};

#endif /* LOCUS_BPF_REUSEPORT_H_ */
