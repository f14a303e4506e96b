// The NUMA sensor: per task, hinting faults by memory node, from
// bpf/numa.bpf.c (fentry: exact pages; iter/task: the kernel's decaying
// weights) or from /proc/PID/task/TID/sched. Inactive, and saying why, where
// the kernel takes no hinting faults.
#ifndef LOCUS_AGENT_SENSORS_NUMA_SENSOR_H_
#define LOCUS_AGENT_SENSORS_NUMA_SENSOR_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/sensors/bpf_maps.h"
#include "agent/sensors/bpf_skeleton.h"
#include "agent/sensors/sensor_source.h"
#include "agent/sensors/source_plan.h"
#include "agent/sensors/task_iterator.h"
#include "agent/sensors/task_table.h"
#include "locus/numa.h"

struct numa_bpf;

namespace locus {

class NumaSensor {
 public:
  // Loads and attaches the program of `source` (fentry or iter_task); the
  // procfs source loads nothing and reads /proc instead.
  static absl::StatusOr<std::unique_ptr<NumaSensor>> Open(
      const SensorOptions& options, NumaSource source);
  ~NumaSensor();

  // Says whether the sensor is active (r.numa_active, r.numa_status) and,
  // when it is, adds each task's faults by node.
  absl::Status Read(SensorReading& r, TaskTable& tasks, const TaskScope& scope);

 private:
  NumaSensor(const SensorOptions& options, NumaSource source);
  // Before load: which program, and the fault map only where it is used.
  void Configure();
  absl::Status ReadFentry(SensorReading& r, TaskTable& tasks);
  absl::Status ReadIterator(TaskTable& tasks, const TaskScope& scope);
  void ReadProcfs(SensorReading& r, TaskTable& tasks) const;

  const SensorOptions options_;
  const NumaSource source_;
  bool active_ = false;
  std::string status_;
  BpfSkeleton<numa_bpf> skel_{"numa"};
  std::unique_ptr<TaskIterator> iterator_;                    // iter_task
  HashBatchReader<uint32_t, locus_numa_fentry_task> faults_;  // fentry
};

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_NUMA_SENSOR_H_
