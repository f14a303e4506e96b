// The scheduler sensor (bpf/sched.bpf.c): per task, migrations (cross-node
// ones apart) and on-CPU time by node; per CPU, context switches and busy
// time; and which processes were renamed.
#ifndef LOCUS_AGENT_SENSORS_SCHED_SENSOR_H_
#define LOCUS_AGENT_SENSORS_SCHED_SENSOR_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/sensors/bpf_skeleton.h"
#include "agent/sensors/sensor_source.h"
#include "agent/sensors/source_plan.h"
#include "agent/sensors/task_iterator.h"
#include "agent/sensors/task_table.h"

struct sched_bpf;
struct locus_sched_task;

namespace locus {

class SchedSensor {
 public:
  // Loads and attaches the programs of `source` (tp_btf or raw_tp). On
  // tp_btf the task iterator also reads the softirq sensor's per-task
  // charges from `softirq_tasks` (SoftirqSensor::task_storage_fd).
  static absl::StatusOr<std::unique_ptr<SchedSensor>> Open(
      const SensorOptions& options, TraceSource source, int softirq_tasks);
  ~SchedSensor();

  // Per task and per CPU figures and drops. On tp_btf the tasks carry the
  // softirq charges too, scaled by r.softirq_traced (read before this).
  absl::Status Read(SensorReading& r, TaskTable& tasks, const TaskScope& scope);
  // Last in a reading, once nothing can fail (a failed reading leaves the
  // renames for the next): r.renamed, the processes renamed since the last
  // call, nullopt when the set lost some (r.drops tells).
  void TakeRenamed(SensorReading& r);

 private:
  SchedSensor(const SensorOptions& options, TraceSource source);
  bool btf() const { return source_ == TraceSource::kTpBtf; }
  // Before load: the CPU->node map, which programs and maps, and sizes.
  absl::Status Configure(int softirq_tasks);
  void AddTask(const locus_sched_task& s, double softirq_traced,
               TaskTable& tasks) const;
  void ReadCpus(SensorReading& r) const;
  std::vector<int32_t> DrainRenamed();

  const SensorOptions options_;
  const TraceSource source_;
  const int ncpus_;
  BpfSkeleton<sched_bpf> skel_{"sched"};
  std::unique_ptr<TaskIterator> iterator_;  // tp_btf
  uint64_t renamed_lost_ = 0;  // the renames lost as of the last call
};

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_SCHED_SENSOR_H_
