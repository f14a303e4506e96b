// Turns the sensors' cumulative counters into per-tick figures on the host
// model's snapshot: runtime per node, migrations, faults and NET_RX time per
// thread, busy and softirq time per CPU.
#ifndef LOCUS_AGENT_DAEMON_SENSOR_MERGE_H_
#define LOCUS_AGENT_DAEMON_SENSOR_MERGE_H_

#include <vector>

#include "agent/sensors/sensor_reading.h"
#include "policy/snapshot.h"

namespace locus {

class SensorMerge {
 public:
  // Adds `reading` (cumulative) to `snapshot` as deltas since the previous
  // call. A thread seen for the first time starts its baseline: its deltas
  // are zero this tick rather than everything it did before.
  void Merge(const SensorReading& reading, Snapshot* snapshot);

 private:
  void MergeThreads(const SensorReading& reading, Snapshot* snapshot);
  void MergeCpus(const SensorReading& reading, Snapshot* snapshot) const;

  // Previous counters of the targets' threads, ascending by tid.
  std::vector<TaskCounters> tasks_;
  std::vector<CpuCounters> cpus_;  // previous, by cpu
  uint64_t previous_ns_ = 0;
};

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_SENSOR_MERGE_H_
