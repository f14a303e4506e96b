// What locusd does with each tick's report, on the loop thread: publishes
// it as metrics (stream and status), tells the host scan what changed (a new
// selection, processes acted on, IRQs found kernel-managed), and tells
// systemd what the last tick did (the watchdog has a thread of its own,
// watchdog.h).
#ifndef LOCUS_AGENT_DAEMON_TICK_PUBLISHER_H_
#define LOCUS_AGENT_DAEMON_TICK_PUBLISHER_H_

#include <cstdint>

#include "absl/time/time.h"
#include "agent/api/metrics_export.h"
#include "agent/api/metrics_hub.h"
#include "agent/core/loop.h"
#include "agent/daemon/controller.h"
#include "agent/daemon/executor.h"
#include "agent/daemon/host_identity.h"
#include "agent/daemon/snapshot_collector.h"
#include "agent/host/targets.h"

namespace locus {

class TickPublisher {
 public:
  // All borrowed. `scan` is how the host scan reads threads; the policy's
  // selection (at `policy_version` now) goes on top. `identity` goes in
  // every message.
  TickPublisher(absl::Duration tick, MetricsHub* hub,
                SnapshotCollector* collector, ActuatorExecutor* executor,
                TargetScanOptions scan, uint64_t policy_version,
                HostIdentity identity);

  // The controller answers from the last tick's metrics; it is made after
  // the loop, whose sink this is, so it comes later (before the loop runs).
  void set_controller(DaemonController* controller) {
    controller_ = controller;
  }

  // Also feeds each tick to Prometheus (with the status of that tick);
  // borrowed, set before the loop runs.
  void set_metrics_export(MetricsExport* metrics_export) {
    metrics_export_ = metrics_export;
  }

  void Publish(const TickReport& report);

 private:
  void FeedBack(const TickReport& report);
  void NotifySystemd(const TickReport& report);

  const absl::Duration tick_;
  MetricsHub* const hub_;
  SnapshotCollector* const collector_;
  ActuatorExecutor* const executor_;
  const TargetScanOptions scan_;
  const HostIdentity identity_;
  uint64_t policy_version_;
  DaemonController* controller_ = nullptr;
  MetricsExport* metrics_export_ = nullptr;
};

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_TICK_PUBLISHER_H_
