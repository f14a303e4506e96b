// The loop's SnapshotSource on a real host: the host model (a /proc and /sys
// scan, the slow part: numa_maps of every target) refreshes on its own
// thread once per period, and each tick takes its latest result and merges
// the sensors' counters into it. A scan that stalls therefore delays only
// itself; the tick goes on with the last good model.
#ifndef LOCUS_AGENT_DAEMON_SNAPSHOT_COLLECTOR_H_
#define LOCUS_AGENT_DAEMON_SNAPSHOT_COLLECTOR_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "agent/core/ports.h"
#include "agent/daemon/listener_scan.h"
#include "agent/daemon/sensor_merge.h"
#include "agent/host/host_model.h"
#include "agent/host/host_paths.h"
#include "agent/host/proc_pressure.h"
#include "agent/sensors/sensor_source.h"
#include "common/clock.h"

namespace locus {

struct CollectorOptions {
  absl::Duration period = absl::Seconds(1);
  // Where /proc (listeners, pressure, numa_balancing) and /sys (the memory
  // tiers' movers) are read each refresh.
  HostPaths paths;
};

// The host scan's selection from the policy, on top of how `base` reads
// threads.
TargetScanOptions TargetsOf(const v1::Policy& policy, TargetScanOptions base);

class SnapshotCollector : public SnapshotSource {
 public:
  // `model` is refreshed on the collector's thread; `sensors` (may be null:
  // no BPF at all) is read on the caller's. `clock` stamps each snapshot.
  // `accepts` (may be null) is read on the collector's thread: which thread
  // accepts on which socket where the workers are threads.
  SnapshotCollector(CollectorOptions options, std::unique_ptr<HostModel> model,
                    SensorSource* sensors, Clock* clock,
                    std::unique_ptr<AcceptOwners> accepts = nullptr);
  ~SnapshotCollector() override;

  // Starts the refresh thread; the first scan is done before it returns, so
  // the first tick has a model.
  void Start();
  void Stop();

  absl::StatusOr<Snapshot> Collect() override;

  // What the last sensor reading said about itself (sources, why NUMA data
  // is absent, drop counters); empty before the first reading.
  struct SensorState {
    SensorSources sources;
    bool numa_active = false;
    std::string numa_status;
    std::map<std::string, uint64_t> drops;
  };
  SensorState sensor_state() const;

  // Changes the selection (policy reload), and the IRQs the actuator found
  // kernel-managed. Both take effect at the next scan.
  void SetTargets(TargetScanOptions targets);
  void SetManagedIrqs(std::set<int> irqs);
  // Processes the agent just acted on: the next scan re-reads their threads
  // and memory instead of reusing them.
  void MarkStale(const std::set<int32_t>& pids);

  // The targets' reuseport groups as the last scan found them, with what
  // connection steering needs to reach their sockets (the snapshot carries
  // what the policy needs: ListenGroupSample).
  std::vector<ListenGroup> listen_groups() const;

 private:
  void RefreshOnce();
  // Marks stale the targets whose threads run on other nodes than at the
  // last tick (the sensors tell where each thread ran).
  void MarkMovedStale(const Snapshot& snapshot);
  // Adds CPU busy and run-queue wait over the tick to `snapshot`.
  void SamplePressure(Snapshot& snapshot);

  CollectorOptions options_;
  std::unique_ptr<HostModel> model_;       // collector thread only
  std::unique_ptr<AcceptOwners> accepts_;  // listeners_'s
  ListenerScan listeners_;                 // collector thread only
  SensorSource* sensors_;
  Clock* clock_;
  SensorMerge merge_;  // tick thread only
  // CPU busy from every task and the targets' run-queue wait, read each
  // tick (not each scan): they are rates over the tick. Tick thread only,
  // as is what it last logged (a file that stays bad is logged once).
  PressureSampler pressure_;
  std::set<std::string> pressure_logged_;
  // Per target process, the nodes its threads ran on at the last tick: a
  // change marks it stale (its memory may now be remote). Tick thread only.
  std::map<int32_t, uint64_t> thread_nodes_;
  // What the last scan logged, so that a file that stays malformed is
  // reported once, not every second. Collector thread only.
  std::set<std::string> logged_;

  mutable absl::Mutex mu_;
  std::optional<Snapshot> latest_ ABSL_GUARDED_BY(mu_);
  std::vector<ListenGroup> latest_groups_ ABSL_GUARDED_BY(mu_);
  absl::Status latest_status_ ABSL_GUARDED_BY(mu_);
  std::optional<TargetScanOptions> pending_targets_ ABSL_GUARDED_BY(mu_);
  std::optional<std::set<int>> pending_managed_ ABSL_GUARDED_BY(mu_);
  std::set<int32_t> pending_stale_ ABSL_GUARDED_BY(mu_);
  // Renames the sensors reported since the last scan (HostModel::
  // NoteRenamed): whether any reading came, and whether one could not tell.
  bool renames_reported_ ABSL_GUARDED_BY(mu_) = false;
  bool renames_unknown_ ABSL_GUARDED_BY(mu_) = false;
  std::set<int32_t> pending_renamed_ ABSL_GUARDED_BY(mu_);
  SensorState sensor_state_ ABSL_GUARDED_BY(mu_);

  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_SNAPSHOT_COLLECTOR_H_
