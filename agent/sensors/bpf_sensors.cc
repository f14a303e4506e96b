#include "agent/sensors/bpf_sensors.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "agent/sensors/bpf_maps.h"
#include "agent/sensors/numa_sensor.h"
#include "agent/sensors/sched_sensor.h"
#include "agent/sensors/softirq_sensor.h"
#include "agent/sensors/task_table.h"
#include "common/clock.h"
#include "common/status_macros.h"
#include "locus/limits.h"

namespace locus {
namespace {

static_assert(kDefaultSensorMaxTasks == LOCUS_MAX_TASKS);

// The three sensors as one SensorSource: each reading is theirs in turn,
// over one table of tasks and one scope.
class BpfSensors final : public SensorSource {
 public:
  BpfSensors(const SensorOptions& options, const SourcePlan& plan)
      : ncpus_(PossibleCpus()),
        tasks_(std::clamp(options.num_nodes, 1, LOCUS_MAX_NODES)) {
    sources_.sched = SourceName(plan.sched);
    sources_.numa = SourceName(plan.numa);
    sources_.softirq = SourceName(plan.softirq);
  }

  absl::Status Open(const SensorOptions& options, const SourcePlan& plan) {
    // The sched object's iterator reads the softirq object's per-task
    // figures on tp_btf: one source for both, and softirq opened first.
    if (plan.sched != plan.softirq) {
      return absl::InvalidArgumentError(
          "the sched and softirq sensors need the same source");
    }
    if (plan.softirq != TraceSource::kNone) {
      ASSIGN_OR_RETURN(softirq_, SoftirqSensor::Open(options, plan.softirq));
      ASSIGN_OR_RETURN(sched_, SchedSensor::Open(options, plan.sched,
                                                 softirq_->task_storage_fd()));
    }
    ASSIGN_OR_RETURN(numa_, NumaSensor::Open(options, plan.numa));
    return absl::OkStatus();
  }

  SensorSources sources() const override { return sources_; }

  absl::StatusOr<SensorReading> Read() override {
    SensorReading r;
    r.monotonic_ns = MonotonicNs();
    r.sources = sources_;
    r.cpus.resize(ncpus_);
    for (int c = 0; c < ncpus_; ++c) r.cpus[c].cpu = c;
    tasks_.Reset();
    // Softirq counts first: the per-task charges the others read are
    // scaled by the share of softirqs seen.
    if (softirq_) RETURN_IF_ERROR(softirq_->ReadCounts(r));
    if (sched_) RETURN_IF_ERROR(sched_->Read(r, tasks_, scope_));
    if (softirq_) softirq_->Read(r, tasks_);
    RETURN_IF_ERROR(numa_->Read(r, tasks_, scope_));
    if (sched_) sched_->TakeRenamed(r);
    tasks_.TakeSorted(scope_, r.tasks);
    return r;
  }

  void SetScope(std::optional<std::vector<int32_t>> pids) override {
    if (pids) std::sort(pids->begin(), pids->end());
    scope_ = std::move(pids);
  }

 private:
  const int ncpus_;
  SensorSources sources_;
  TaskTable tasks_;
  TaskScope scope_;  // sorted
  std::unique_ptr<SoftirqSensor> softirq_;
  std::unique_ptr<SchedSensor> sched_;  // shares softirq_'s task storage
  std::unique_ptr<NumaSensor> numa_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SensorSource>> OpenBpfSensors(
    const SensorOptions& options, const SourcePlan& plan) {
  auto sensors = std::make_unique<BpfSensors>(options, plan);
  RETURN_IF_ERROR(sensors->Open(options, plan));
  return std::unique_ptr<SensorSource>(std::move(sensors));
}

absl::StatusOr<std::unique_ptr<SensorSource>> OpenBpfSensors(
    const SensorOptions& options, FeatureSet& features) {
  return OpenBpfSensors(options, ChooseSources(features));
}

}  // namespace locus
