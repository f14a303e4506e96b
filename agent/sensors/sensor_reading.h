// What the sensors report: plain structs, no libbpf types.
//
// Every counter here is CUMULATIVE, never a delta: the caller diffs two
// readings of the same task/CPU/IRQ to get per-tick deltas. Since when:
//  - per CPU, per IRQ, cross_node_migrations, softirq time per task: since
//    the sensors were opened;
//  - migrations and runtime_ns with the tp_btf source: over the task's life
//    (the kernel's se.nr_migrations and se.sum_exec_runtime);
//  - NUMA faults from iter_task/procfs: the kernel's own decaying per-task
//    weights, not counts (see NumaFaultKind).
#ifndef LOCUS_AGENT_SENSORS_SENSOR_READING_H_
#define LOCUS_AGENT_SENSORS_SENSOR_READING_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "policy/snapshot.h"

namespace locus {

// How the NUMA fault numbers of a reading are to be read.
enum class NumaFaultKind {
  kNone,           // no fault data (inactive or no source)
  kPagesExact,     // fentry: pages faulted, cumulative, local/remote per node
  kKernelDecayed,  // iter_task / procfs: task->numa_faults weights, halved
                   // by the kernel each scan period; per-node totals only
};

struct NumaNodeFaults {
  uint64_t total = 0;   // by memory node
  uint64_t local = 0;   // only for kPagesExact
  uint64_t remote = 0;  // only for kPagesExact
};

struct TaskCounters {
  int32_t tid = 0;
  int32_t pid = 0;  // thread-group id
  std::string comm;
  int cpu = -1;  // CPU it last ran on, -1 when not seen switching out
  uint64_t migrations = 0;
  uint64_t cross_node_migrations = 0;
  // Per node, inline up to 4 nodes: a reading holds one of these per task
  // on the host, every tick, and copying it then allocates nothing.
  absl::InlinedVector<uint64_t, 4> runtime_ns;  // indexed by node id
  // Softirq time spent while this task was current (the task interrupted,
  // or ksoftirqd); sampled estimate.
  uint64_t net_rx_softirq_ns = 0;
  uint64_t softirq_ns = 0;
  // Indexed by memory node id; empty when the reading has no NUMA data.
  absl::InlinedVector<NumaNodeFaults, 4> numa_faults;
  // Task-wide locality (kKernelDecayed sources: task->numa_faults_locality).
  uint64_t numa_local = 0;
  uint64_t numa_remote = 0;
};

struct CpuCounters {
  int cpu = 0;
  // Slices of fair-class tasks ending here (sched_switch, the kernel's own
  // se.sum_exec_runtime clock), estimated from sampled switches; RT/DL
  // slices are not timed, only counted (also estimated) in untimed_switches.
  uint64_t busy_ns = 0;
  uint64_t switches = 0;  // exact
  uint64_t untimed_switches = 0;
  // Count exact; time estimated from sampled events (see sensor_source.h).
  uint64_t softirq_ns[kNumSoftirqVectors] = {};
  uint64_t softirq_count[kNumSoftirqVectors] = {};
};

struct IrqCounters {
  int irq = 0;
  std::vector<uint64_t> count_per_cpu;  // indexed by cpu, exact
  std::vector<uint64_t> ns_per_cpu;     // handler time, sampled estimate
};

// Which implementation feeds each sensor, e.g. sched "tp_btf",
// numa "iter_task", softirq "raw_tp"; "none" when it could not load.
struct SensorSources {
  std::string sched = "none";
  std::string numa = "none";
  std::string softirq = "none";
};

struct SensorReading {
  uint64_t monotonic_ns = 0;  // CLOCK_MONOTONIC when read
  SensorSources sources;
  // False on a single-node host or with kernel.numa_balancing=0: then there
  // are no hinting faults at all, and numa_status says why instead of the
  // reading carrying zeros that look like data.
  bool numa_active = false;
  std::string numa_status;
  NumaFaultKind numa_kind = NumaFaultKind::kNone;
  std::vector<TaskCounters> tasks;  // ascending by tid
  std::vector<CpuCounters> cpus;    // indexed by cpu
  std::vector<IrqCounters> irqs;    // ascending by irq
  // Processes whose name may have changed (exec, or their leader renamed)
  // since the previous reading, ascending. nullopt when the sensors cannot
  // tell (no scheduler sensor, or more renames than they keep): then any
  // process may have been renamed.
  std::optional<std::vector<int32_t>> renamed;
  // Share of the softirqs since the source opened that its hooks saw: 1
  // unless they trace in windows (SensorOptions::softirq_window_ns).
  // Softirq counts are exact either way; times and per-task charges are
  // estimates scaled by it.
  double softirq_traced = 1;
  // Lost information, by name ("sched.storage", "softirq.irq_map_full",
  // "sched.lru_evicted", ...), cumulative.
  std::map<std::string, uint64_t> drops;
};

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_SENSOR_READING_H_
