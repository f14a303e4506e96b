// The softirq sensor (bpf/softirq.bpf.c): softirq count and time per CPU and
// vector, hardirq count and time per IRQ and CPU, and softirq time charged
// to the task each one interrupted.
#ifndef LOCUS_AGENT_SENSORS_SOFTIRQ_SENSOR_H_
#define LOCUS_AGENT_SENSORS_SOFTIRQ_SENSOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/sensors/bpf_maps.h"
#include "agent/sensors/bpf_skeleton.h"
#include "agent/sensors/gate_windows.h"
#include "agent/sensors/proc_softirqs.h"
#include "agent/sensors/sensor_source.h"
#include "agent/sensors/source_plan.h"
#include "agent/sensors/task_table.h"

struct softirq_bpf;

namespace locus {

class SoftirqSensor {
 public:
  // Loads and attaches the programs of `source` (tp_btf or raw_tp).
  static absl::StatusOr<std::unique_ptr<SoftirqSensor>> Open(
      const SensorOptions& options, TraceSource source);
  ~SoftirqSensor();

  // The task storage the tp_btf programs charge. The sched object's task
  // iterator reads it: one walk over the threads for both sensors.
  int task_storage_fd() const;

  // First in a reading: counts and time per CPU and vector, and the share
  // of softirqs the hooks saw (r.softirq_traced), by which every per-task
  // charge is scaled.
  absl::Status ReadCounts(SensorReading& r);
  // Per IRQ figures, drops, and on raw_tp the per-task charges (on tp_btf
  // they come with the sched sensor's tasks).
  void Read(SensorReading& r, TaskTable& tasks);

 private:
  SoftirqSensor(const SensorOptions& options, TraceSource source);
  bool btf() const { return source_ == TraceSource::kTpBtf; }
  // Before load: which programs and maps, and their sizes.
  void Configure();
  // After load, before attach: the sampling periods and the softirq hooks'
  // gate (open unless windowed) into every CPU slot.
  void SetSlots();
  // Opens or closes the softirq hooks' gate on every CPU.
  void SetGate(bool open);
  absl::Status StartWindows();
  void ReadIrqs(SensorReading& r) const;
  absl::StatusOr<std::vector<SoftirqCounts>> ReadProcSoftirqs() const;

  const SensorOptions options_;
  const TraceSource source_;
  const int ncpus_;
  const size_t irq_entries_;  // one per (possible CPU, IRQ number)
  const uint64_t hardirq_period_;
  // Softirq hooks traced in windows (SensorOptions::softirq_window_ns).
  const bool windowed_;
  BpfSkeleton<softirq_bpf> skel_{"softirq"};
  MappedArray irq_stats_;
  std::vector<SoftirqCounts> base_;       // /proc/softirqs at open, windowed
  std::unique_ptr<GateWindows> windows_;  // last: uses the skeleton
};

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_SOFTIRQ_SENSOR_H_
