#include "agent/daemon/snapshot_collector.h"

#include <utility>

#include "agent/host/memory_tiering.h"
#include "agent/sensors/proc_sched.h"
#include "common/log.h"

namespace locus {

TargetScanOptions TargetsOf(const v1::Policy& policy, TargetScanOptions base) {
  base.selector = TargetSelector{};
  base.selector.comms.assign(policy.targets().comm().begin(),
                             policy.targets().comm().end());
  base.selector.thread_worker_comms.assign(
      policy.targets().thread_workers().begin(),
      policy.targets().thread_workers().end());
  base.trust.systemd_unit = policy.targets().systemd_unit();
  return base;
}

SnapshotCollector::SnapshotCollector(CollectorOptions options,
                                     std::unique_ptr<HostModel> model,
                                     SensorSource* sensors, Clock* clock,
                                     std::unique_ptr<AcceptOwners> accepts)
    : options_(std::move(options)),
      model_(std::move(model)),
      accepts_(std::move(accepts)),
      // Every 5 scans at most a new listener goes unseen for; worker
      // changes (reload, restart) are seen at once.
      listeners_(options_.paths.procfs_root, 5, accepts_.get()),
      sensors_(sensors),
      clock_(clock),
      pressure_(options_.paths.procfs_root) {}

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

void SnapshotCollector::MarkStale(const std::set<int32_t>& pids) {
  absl::MutexLock lock(&mu_);
  pending_stale_.insert(pids.begin(), pids.end());
}

void SnapshotCollector::RefreshOnce() {
  {
    absl::MutexLock lock(&mu_);
    model_->MarkStale(pending_stale_);
    pending_stale_.clear();
    if (renames_reported_) {
      std::optional<std::vector<int32_t>> renamed;
      if (!renames_unknown_) {
        renamed.emplace(pending_renamed_.begin(), pending_renamed_.end());
      }
      model_->NoteRenamed(renamed);
      renames_reported_ = renames_unknown_ = false;
      pending_renamed_.clear();
    }
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
  snapshot.numa_balancing_mode =
      ReadNumaBalancingMode(options_.paths.procfs_root);
  // Bad content is in `errors` (logged once below); only a wrong root
  // fails, and then the movers are simply unknown: nothing decides on them
  // but what Locus shows.
  absl::StatusOr<MemoryTiering> tiering = ReadMemoryTiering(
      options_.paths.sysfs_root, options_.paths.procfs_root, &errors);
  if (tiering.ok()) {
    snapshot.tiering = *std::move(tiering);
  } else {
    errors.push_back(tiering.status().ToString());
  }
  if (status.ok()) {
    listeners_.Refresh(snapshot.targets, &errors);
    for (const ListenGroup& group : listeners_.groups()) {
      snapshot.listen_groups.push_back(SampleOf(group));
    }
  }
  if (!status.ok()) errors.push_back(status.ToString());
  std::set<std::string> now(errors.begin(), errors.end());
  for (const std::string& error : now) {
    if (!logged_.contains(error)) LogWarning("host model: ", error);
  }
  logged_ = std::move(now);
  absl::MutexLock lock(&mu_);
  latest_status_ = status;
  // A failed scan keeps the last good model.
  if (status.ok()) {
    latest_ = std::move(snapshot);
    latest_groups_ = listeners_.groups();
  }
}

std::vector<ListenGroup> SnapshotCollector::listen_groups() const {
  absl::MutexLock lock(&mu_);
  return latest_groups_;
}

void SnapshotCollector::MarkMovedStale(const Snapshot& snapshot) {
  std::vector<int> node_of_cpu;
  for (size_t n = 0; n < snapshot.topology.nodes.size(); ++n) {
    for (int cpu : snapshot.topology.nodes[n].cpus) {
      if (cpu >= static_cast<int>(node_of_cpu.size()))
        node_of_cpu.resize(cpu + 1, -1);
      node_of_cpu[cpu] = static_cast<int>(n);
    }
  }
  std::map<int32_t, uint64_t> now;
  std::set<int32_t> moved;
  for (const Target& target : snapshot.targets) {
    uint64_t mask = 0;
    for (const ThreadSample& thread : target.threads) {
      if (thread.cpu >= 0 &&
          thread.cpu < static_cast<int>(node_of_cpu.size()) &&
          node_of_cpu[thread.cpu] >= 0)
        mask |= uint64_t{1} << (node_of_cpu[thread.cpu] % 64);
    }
    now[target.pid] = mask;
    auto it = thread_nodes_.find(target.pid);
    if (it != thread_nodes_.end() && it->second != mask)
      moved.insert(ProcessOf(target));
  }
  thread_nodes_ = std::move(now);
  if (!moved.empty()) MarkStale(moved);
}

void SnapshotCollector::SamplePressure(Snapshot& snapshot) {
  std::vector<std::string> errors;
  pressure_.Sample(&snapshot, &errors);
  std::set<std::string> now(errors.begin(), errors.end());
  for (const std::string& error : now) {
    if (!pressure_logged_.contains(error)) LogWarning("pressure: ", error);
  }
  pressure_logged_ = std::move(now);
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
  snapshot.now_ns = clock_->NowNs();
  snapshot.tick_ns = absl::ToInt64Nanoseconds(options_.period);
  SamplePressure(snapshot);
  if (sensors_ != nullptr) {
    // Only the targets' threads are merged: read no others.
    std::vector<int32_t> pids;
    pids.reserve(snapshot.targets.size());
    for (const Target& target : snapshot.targets) {
      // A server's thread workers are consecutive: its pid once.
      if (pids.empty() || pids.back() != ProcessOf(target)) {
        pids.push_back(ProcessOf(target));
      }
    }
    sensors_->SetScope(std::move(pids));
    absl::StatusOr<SensorReading> reading = sensors_->Read();
    if (!reading.ok()) {
      // The model alone still makes a snapshot: decisions on placement and
      // memory go on, only the sensor figures are missing this tick.
      LogWarning("reading the sensors failed: ", reading.status().ToString());
    } else {
      merge_.Merge(*reading, &snapshot);
      MarkMovedStale(snapshot);
      absl::MutexLock lock(&mu_);
      sensor_state_ = SensorState{reading->sources, reading->numa_active,
                                  reading->numa_status, reading->drops};
      renames_reported_ = true;
      if (reading->renamed) {
        pending_renamed_.insert(reading->renamed->begin(),
                                reading->renamed->end());
      } else {
        renames_unknown_ = true;
      }
    }
  }
  return snapshot;
}

}  // namespace locus
