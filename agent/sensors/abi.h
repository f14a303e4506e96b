// The BPF ABI headers as C++ sees them, with their layout pinned: a field
// added or moved on one side without the other fails the build here instead
// of silently misreading maps.
#ifndef LOCUS_AGENT_SENSORS_ABI_H_
#define LOCUS_AGENT_SENSORS_ABI_H_

#include <linux/types.h>

#include <cstddef>
#include <iterator>

#include "locus/numa.h"
#include "locus/sched.h"
#include "locus/softirq.h"
#include "policy/snapshot.h"

namespace locus::abi {

static_assert(LOCUS_NR_SOFTIRQS == kNumSoftirqVectors);
static_assert(LOCUS_NET_RX_SOFTIRQ == kSoftirqNetRx);

static_assert(offsetof(locus_sched_task, tid) == 0);
static_assert(offsetof(locus_sched_task, pid) == 4);
static_assert(offsetof(locus_sched_task, comm) == 8);
static_assert(offsetof(locus_sched_task, cpu) == 24);
static_assert(offsetof(locus_sched_task, migrations) == 32);
static_assert(offsetof(locus_sched_task, cross_node_migrations) == 40);
static_assert(offsetof(locus_sched_task, runtime_ns) == 48);
static_assert(offsetof(locus_sched_task, runtime_mark_ns) ==
              48 + 8 * LOCUS_MAX_NODES);
static_assert(offsetof(locus_sched_task, net_rx_ns) ==
              56 + 8 * LOCUS_MAX_NODES);
static_assert(sizeof(locus_sched_task) == 72 + 8 * LOCUS_MAX_NODES);
static_assert(sizeof(locus_sched_task_state) == 16 + 8 * LOCUS_MAX_NODES);
// Per-CPU slots are whole cache lines, so CPUs never share one.
static_assert(sizeof(locus_sched_cpu) == 64);
static_assert(offsetof(locus_sched_cpu, sample_mask) == 8);
static_assert(offsetof(locus_sched_cpu, sampled_untimed) == 32);
static_assert(sizeof(locus_softirq_cpu) % 64 == 0);

static_assert(offsetof(locus_numa_fentry_task, local_pages) == 24);
static_assert(offsetof(locus_numa_fentry_task, remote_pages) ==
              24 + 8 * LOCUS_MAX_NODES);
static_assert(sizeof(locus_numa_fentry_task) == 24 + 16 * LOCUS_MAX_NODES);
static_assert(offsetof(locus_numa_iter_task, mem_faults) == 24);
static_assert(offsetof(locus_numa_iter_task, cpu_faults) ==
              24 + 8 * LOCUS_MAX_NODES);
static_assert(offsetof(locus_numa_iter_task, remote) ==
              24 + 16 * LOCUS_MAX_NODES);
static_assert(offsetof(locus_numa_iter_task, preferred_nid) ==
              24 + 16 * LOCUS_MAX_NODES + 32);
static_assert(sizeof(locus_numa_iter_task) == 24 + 16 * LOCUS_MAX_NODES + 40);

static_assert(offsetof(locus_softirq_cpu, softirq_tick) == 16);
static_assert(offsetof(locus_softirq_cpu, hardirq_mask) == 28);
static_assert(offsetof(locus_softirq_cpu, softirq_on) == 32);
static_assert(offsetof(locus_softirq_cpu, count) == 40);
static_assert(offsetof(locus_softirq_cpu, sampled_ns) ==
              40 + 8 * LOCUS_NR_SOFTIRQS);
static_assert(offsetof(locus_softirq_cpu, sampled_count) ==
              40 + 16 * LOCUS_NR_SOFTIRQS);
static_assert(sizeof(locus_softirq_cpu) == 40 + 24 * LOCUS_NR_SOFTIRQS + 40);
static_assert(sizeof(locus_irq_stat) == 16);
static_assert(offsetof(locus_softirq_task, net_rx_ns) == 24);
static_assert(sizeof(locus_softirq_task) == 40);

// One name per drop counter (LOCUS_DROP_NAMES).
static_assert(std::size(kLocusSchedDropNames) == LOCUS_SCHED_NR_DROPS);
static_assert(std::size(kLocusNumaDropNames) == LOCUS_NUMA_NR_DROPS);
static_assert(std::size(kLocusSoftirqDropNames) == LOCUS_SOFTIRQ_NR_DROPS);

// Map values are copied out in 8-byte units.
static_assert(sizeof(locus_irq_stat) % 8 == 0);

}  // namespace locus::abi

#endif  // LOCUS_AGENT_SENSORS_ABI_H_
