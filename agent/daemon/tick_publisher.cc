#include "agent/daemon/tick_publisher.h"

#include <systemd/sd-daemon.h>

#include <set>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "agent/daemon/metrics_convert.h"
#include "common/log.h"

namespace locus {
namespace {

// The processes whose threads or memory this tick changed (or reverted).
std::set<int32_t> ProcessesActedOn(const TickReport& report) {
  std::set<int32_t> pids;
  auto add = [&](const Action& action) {
    if (const auto* pin = std::get_if<PinThread>(&action.op))
      pids.insert(pin->pid);
    if (const auto* move = std::get_if<MigratePages>(&action.op))
      pids.insert(move->pid);
  };
  // Only what changed the host: a dry run, or an action refused or
  // finding its entity already in place, leaves the last scan true.
  for (const ActionRecord& record : report.actions) {
    if (record.result.outcome == Outcome::kApplied) add(record.action);
  }
  for (const RevertRecord& revert : report.reverts) add(revert.verdict.action);
  return pids;
}

}  // namespace

TickPublisher::TickPublisher(absl::Duration tick, MetricsHub* hub,
                             SnapshotCollector* collector,
                             ActuatorExecutor* executor, TargetScanOptions scan,
                             uint64_t policy_version, HostIdentity identity)
    : tick_(tick),
      hub_(hub),
      collector_(collector),
      executor_(executor),
      scan_(std::move(scan)),
      identity_(std::move(identity)),
      policy_version_(policy_version) {}

void TickPublisher::Publish(const TickReport& report) {
  MetricsContext context{tick_, absl::Now(), collector_->sensor_state()};
  v1::Metrics metrics = ToMetrics(report, context);
  metrics.set_hostname(identity_.hostname);
  metrics.set_boot_id(identity_.boot_id);
  for (v1::Neighbour& neighbour : executor_->neighbours()) {
    *metrics.add_neighbours() = std::move(neighbour);
  }
  if (controller_ != nullptr) controller_->Update(metrics);
  if (metrics_export_ != nullptr && controller_ != nullptr) {
    absl::StatusOr<v1::AgentStatus> status = controller_->GetStatus();
    if (status.ok()) metrics_export_->Observe(metrics, *status);
  }
  hub_->Publish(std::move(metrics));
  FeedBack(report);
  NotifySystemd(report);
  VLog(1, "tick ", report.tick, ": ", report.actions.size(), " action(s), ",
       report.reverts.size(), " revert(s), ", report.external.size(),
       " external change(s), took ", absl::FormatDuration(report.took));
}

void TickPublisher::FeedBack(const TickReport& report) {
  if (report.policy.version != policy_version_) {
    policy_version_ = report.policy.version;
    collector_->SetTargets(TargetsOf(*report.policy.policy, scan_));
  }
  collector_->SetManagedIrqs(executor_->unmanageable_irqs());
  collector_->MarkStale(ProcessesActedOn(report));
}

void TickPublisher::NotifySystemd(const TickReport& report) {
  size_t targets = report.snapshot ? report.snapshot->targets.size() : 0;
  sd_notify(0, absl::StrCat("STATUS=tick ", report.tick, ", ", targets,
                            " target(s), ", report.actions.size(),
                            " action(s), mode ", ModeName(report.mode))
                   .c_str());
}

}  // namespace locus
