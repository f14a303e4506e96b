// The sensors as the rest of the agent sees them: an interface with a
// BPF-backed implementation (OpenBpfSensors, bpf_sensors.h) and a fake
// (fake_sensor_source.h).
#ifndef LOCUS_AGENT_SENSORS_SENSOR_SOURCE_H_
#define LOCUS_AGENT_SENSORS_SENSOR_SOURCE_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/sensors/sensor_reading.h"
#include "common/defaults.h"
#include "policy/snapshot.h"

namespace locus {

// The BPF maps' compiled-in size (LOCUS_MAX_TASKS, checked in bpf_sensors.cc);
// a plain constant because a std::string member keeps SensorOptions{} out of
// constant expressions under clang.
inline constexpr uint32_t kDefaultSensorMaxTasks = 16384;

struct SensorOptions {
  // Takes cpu_node and num_nodes from the host's topology.
  void SetTopology(const Topology& topology) {
    cpu_node = topology.cpu_node;
    num_nodes = 1;
    for (const Node& n : topology.nodes)
      num_nodes = std::max(num_nodes, n.id + 1);
  }

  // cpu -> node id (Topology::cpu_node); CPUs past the end or at -1 count as
  // node 0.
  std::vector<int> cpu_node;
  // Highest possible node id + 1: the stride of the kernel's per-task fault
  // array and the size of per-node vectors in readings.
  int num_nodes = 1;
  // kernel.numa_balancing; with one node or balancing off the NUMA sensor
  // reports itself inactive.
  bool numa_balancing = false;
  // Root of procfs for the /proc/PID/task/TID/sched fallback.
  std::string procfs_root = kDefaultProcfsRoot;
  // Time one softirq in this many per CPU and scale up; counts stay exact.
  // Rounded up to a power of two. Sampled softirqs are also the ones charged
  // to the interrupted task.
  uint32_t softirq_sample_every = 8;
  // Trace with the softirq entry and exit hooks (the busiest the sensors
  // have: two events per packet batch under network load) only for
  // softirq_window_ns in every softirq_window_every_ns. The programs stay
  // attached and return at once outside the windows (a gate in each CPU's
  // slot): attaching and detaching at every window would patch kernel text,
  // which interrupts every CPU (tests/bench/ipi_overhead.sh). Closed, they
  // cost about an empty program (~1% of an nginx's requests/s, NOTES.md);
  // what the sensor adds over that is paid in the windows only. Counts then
  // come from /proc/softirqs (exact), time per vector is the events seen
  // scaled to those counts, and per-task charges are scaled by the share of
  // events seen. 0 (or a window not shorter than its period): traced all
  // the time.
  uint64_t softirq_window_ns = 0;
  uint64_t softirq_window_every_ns = 0;
  // Sample one hardirq in this many per CPU: per-IRQ time and count are
  // both estimates (exact with 1). The kernel counts them exactly in
  // /proc/interrupts; counting every one here would touch a cold cache line
  // per event on a rare hook. A sampled hardirq costs several unsampled ones
  // (the clock, its IRQ's element, both cold): tests/bench/sensor_overhead.sh
  // read the exit hook at 2.0x an empty program with 1 in 16, 1.6x with 1 in
  // 64.
  uint32_t hardirq_sample_every = 64;
  // Time one context switch in this many per CPU for busy_ns (counts stay
  // exact). Default 1, every switch: slice lengths are heavy-tailed, and at
  // a few hundred switches/s sampling 1 in 8 was measured 35% off; raise it
  // only where the switch rate, and so the sensor's cost, is very high.
  uint32_t switch_sample_every = 1;
  // Entries of the per-thread LRU maps (raw_tp and fentry sources; the
  // tp_btf source keeps per-task storage and has no such limit). More live
  // threads than this evict the least recently seen, counted as drops.
  uint32_t max_tasks = kDefaultSensorMaxTasks;
};

class SensorSource {
 public:
  virtual ~SensorSource() = default;
  // Cumulative counters since the source was opened (see sensor_reading.h).
  virtual absl::StatusOr<SensorReading> Read() = 0;
  // Limits the per-task part of the next Reads to the threads of these
  // processes (the daemon's targets); nullopt, the default: every task.
  // Per-CPU and per-IRQ figures are whole either way. A source that cannot
  // read per process may return more tasks than asked.
  virtual void SetScope(std::optional<std::vector<int32_t>> pids) {
    (void)pids;
  }
  virtual SensorSources sources() const = 0;
};

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_SENSOR_SOURCE_H_
