// SPDX-License-Identifier: GPL-2.0
/* Connection steering by node: see locus/reuseport.h. */
// clang-format off
#include "common.bpf.h" /* first: brings vmlinux.h */
#include "locus/reuseport.h"
// clang-format on

char LICENSE[] SEC("license") = "GPL";

struct {
  __uint(type, BPF_MAP_TYPE_REUSEPORT_SOCKARRAY);
  __uint(max_entries, LOCUS_REUSEPORT_MAX_SOCKETS);
  __type(key, __u32);
  __type(value, __u64);
} socks SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, LOCUS_MAX_CPUS);
  __type(key, __u32);
  __type(value, __u32);
} cpu_node SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, LOCUS_MAX_NODES);
  __type(key, __u32);
  __type(value, struct locus_reuseport_node);
} nodes SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, LOCUS_REUSEPORT_NR_ARMS);
  __type(key, __u32);
  __type(value, struct locus_reuseport_node);
} arms SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, LOCUS_REUSEPORT_COUNTER_ROWS *LOCUS_REUSEPORT_NR_PATHS);
  __type(key, __u32);
  __type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 row, enum locus_reuseport_path path) {
  __u32 key = row * LOCUS_REUSEPORT_NR_PATHS + path;
  __u64 *n = bpf_map_lookup_elem(&counters, &key);
  if (n) *n += 1;
}

/* Selects slots[i] of `node`, or the next slot when that socket is gone (a
 * closed socket empties its slot, and a closing one is being migrated). */
static __always_inline int select_on(struct sk_reuseport_md *md,
                                     struct locus_reuseport_node *node) {
  __u32 n = node->count;
  if (n == 0 || n > LOCUS_REUSEPORT_NODE_SLOTS) return -1;
  __u32 first = md->hash % n;
  for (__u32 tries = 0; tries < 2; ++tries) {
    int i = locus_index((first + tries) % n, LOCUS_REUSEPORT_NODE_SLOTS);
    if (i < 0) return -1;
    __u32 slot = node->slots[i];
    if (bpf_sk_select_reuseport(md, &socks, &slot, 0) == 0) return 0;
  }
  return -1;
}

/* What would go to the kernel's hash over every socket: during an
 * experiment, to a treated socket by hash instead (see locus/reuseport.h). */
static __always_inline int leave(struct sk_reuseport_md *md) {
  __u32 key = LOCUS_REUSEPORT_ARM_TREATED;
  struct locus_reuseport_node *treated = bpf_map_lookup_elem(&arms, &key);
  if (treated && treated->count) select_on(md, treated);
  return SK_PASS;
}

/* Returns SK_PASS always: after a selection the kernel uses that socket,
 * without one its own hash. SK_DROP would refuse the connection. */
static __always_inline int steer(struct sk_reuseport_md *md, bool migrating) {
  __u32 cpu = bpf_get_smp_processor_id();
  __u32 *node_id = bpf_map_lookup_elem(&cpu_node, &cpu);
  __u32 row =
      node_id && *node_id < LOCUS_MAX_NODES ? *node_id : LOCUS_MAX_NODES;
  __u32 arm = LOCUS_REUSEPORT_ARM_CONTROL;
  struct locus_reuseport_node *control = bpf_map_lookup_elem(&arms, &arm);
  if (!migrating && control && control->count &&
      bpf_get_prandom_u32() % LOCUS_REUSEPORT_ARM_SCALE <
          control->spill_permille &&
      select_on(md, control) == 0) {
    count(row, LOCUS_REUSEPORT_CONTROL);
    return SK_PASS;
  }
  struct locus_reuseport_node *node =
      row < LOCUS_MAX_NODES ? bpf_map_lookup_elem(&nodes, &row) : NULL;
  if (!node) {
    count(row, LOCUS_REUSEPORT_FALLBACK);
    return leave(md);
  }
  if (!migrating && node->spill_permille &&
      bpf_get_prandom_u32() % LOCUS_REUSEPORT_SPILL_SCALE <
          node->spill_permille) {
    count(row, LOCUS_REUSEPORT_SPILLED);
    return leave(md);
  }
  if (select_on(md, node) != 0) {
    count(row, LOCUS_REUSEPORT_FALLBACK);
    return leave(md);
  }
  count(row, migrating ? LOCUS_REUSEPORT_MIGRATED : LOCUS_REUSEPORT_LOCAL);
  return SK_PASS;
}

/* 5.14+: also called for the requests queued on a listener that closes
 * (migrating_sk set), which would otherwise be reset. */
SEC("sk_reuseport/migrate")
int locus_reuseport_select_or_migrate(struct sk_reuseport_md *md) {
  return steer(md, md->migrating_sk != NULL);
}

/* Older kernels: new connections only. */
SEC("sk_reuseport")
int locus_reuseport_select(struct sk_reuseport_md *md) {
  return steer(md, false);
}
