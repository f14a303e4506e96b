#include "agent/daemon/snapshot_collector.h"

#include <utility>

#include "agent/bpf/proc_sched.h"
#include "common/log.h"

namespace locus {

SnapshotCollector::SnapshotCollector(CollectorOptions options,
                                     std::unique_ptr<HostModel> model,
                                     SensorSource* sensors,
                                     std::function<uint64_t()> clock)
    : options_(std::move(options)),
      model_(std::move(model)),
      sensors_(sensors),
      clock_(std::move(clock)) {}

SnapshotCollector::~SnapshotCollector() { Stop(); }

void SnapshotCollector::Start() {
  RefreshOnce();
  thread_ = std::thread([this] {
    while (!stop_.WaitForNotificationWithTimeout(options_.period)) {
      RefreshOnce();
    }
  });
}

void SnapshotCollector::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

void SnapshotCollector::SetTargets(TargetScanOptions targets) {
  absl::MutexLock lock(&mu_);
  pending_targets_ = std::move(targets);
}

void SnapshotCollector::SetManagedIrqs(std::set<int> irqs) {
  absl::MutexLock lock(&mu_);
  pending_managed_ = std::move(irqs);
}

void SnapshotCollector::RefreshOnce() {
  {
    absl::MutexLock lock(&mu_);
    if (pending_targets_) {
      model_->set_targets(*std::move(pending_targets_));
      pending_targets_.reset();
    }
    if (pending_managed_) {
      model_->SetManagedIrqs(*std::move(pending_managed_));
      pending_managed_.reset();
    }
  }
  Snapshot snapshot;
  std::vector<std::string> errors;
  absl::Status status = model_->Refresh(&snapshot, &errors);
  snapshot.numa_balancing = ReadNumaBalancing(options_.procfs_root);
  if (!status.ok()) errors.push_back(status.ToString());
  std::set<std::string> now(errors.begin(), errors.end());
  for (const std::string& error : now) {
    if (!logged_.contains(error)) LogWarning("host model: ", error);
  }
  logged_ = std::move(now);
  absl::MutexLock lock(&mu_);
  latest_status_ = status;
  // A failed scan keeps the last good model.
  if (status.ok()) latest_ = std::move(snapshot);
}

SnapshotCollector::SensorState SnapshotCollector::sensor_state() const {
  absl::MutexLock lock(&mu_);
  return sensor_state_;
}

absl::StatusOr<Snapshot> SnapshotCollector::Collect() {
  Snapshot snapshot;
  {
    absl::MutexLock lock(&mu_);
    if (!latest_) {
      return latest_status_.ok()
                 ? absl::UnavailableError("the host model has not loaded yet")
                 : latest_status_;
    }
    snapshot = *latest_;
  }
  snapshot.now_ns = clock_();
  snapshot.tick_ns = absl::ToInt64Nanoseconds(options_.period);
  if (sensors_ != nullptr) {
    absl::StatusOr<SensorReading> reading = sensors_->Read();
    if (!reading.ok()) {
      // The model alone still makes a snapshot: decisions on placement and
      // memory go on, only the sensor figures are missing this tick.
      LogWarning("reading the sensors failed: ", reading.status().ToString());
    } else {
      merge_.Merge(*reading, &snapshot);
      absl::MutexLock lock(&mu_);
      sensor_state_ = SensorState{reading->sources, reading->numa_active,
                                  reading->numa_status, reading->drops};
    }
  }
  return snapshot;
}

}  // namespace locus
