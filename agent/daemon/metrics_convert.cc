#include "agent/daemon/metrics_convert.h"

#include <variant>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "agent/api/metrics_builder.h"
#include "google/protobuf/util/time_util.h"

namespace locus {
namespace {

using google::protobuf::util::TimeUtil;

v1::ActionOutcome ToOutcome(Outcome outcome, bool irq) {
  switch (outcome) {
    case Outcome::kApplied:
      return v1::ACTION_OUTCOME_APPLIED;
    case Outcome::kUnchanged:
      return v1::ACTION_OUTCOME_UNCHANGED;
    case Outcome::kDryRun:
      return v1::ACTION_OUTCOME_DRY_RUN;
    case Outcome::kGone:
      return irq ? v1::ACTION_OUTCOME_IRQ_GONE : v1::ACTION_OUTCOME_TASK_GONE;
    case Outcome::kForbidden:
      return v1::ACTION_OUTCOME_FORBIDDEN;
    case Outcome::kUnmanageable:
      return v1::ACTION_OUTCOME_KERNEL_MANAGED;
    case Outcome::kRefused:
      return v1::ACTION_OUTCOME_REFUSED;
    case Outcome::kBackedOff:
    case Outcome::kError:
      return v1::ACTION_OUTCOME_FAILED;
  }
  return v1::ACTION_OUTCOME_UNSPECIFIED;
}

}  // namespace

v1::AgentMode ToAgentMode(Mode mode) {
  return mode == v1::Policy::MODE_DRY_RUN ? v1::AGENT_MODE_DRY_RUN
                                          : v1::AGENT_MODE_ENFORCE;
}

v1::PolicyState ToPolicyState(const PolicyState& state) {
  v1::PolicyState out;
  out.set_path(state.is_default ? "" : state.source);
  out.set_version(state.version);
  out.set_last_error(state.last_error);
  return out;
}

std::vector<v1::SensorSource> ToSensorSources(
    const SnapshotCollector::SensorState& sensors) {
  std::vector<v1::SensorSource> out(3);
  out[0].set_sensor("migrations");
  out[0].set_source(sensors.sources.sched);
  out[1].set_sensor("numa_faults");
  out[1].set_source(sensors.sources.numa);
  out[1].set_detail(sensors.numa_status);
  out[2].set_sensor("softirq");
  out[2].set_source(sensors.sources.softirq);
  for (v1::SensorSource& s : out) s.set_ok(s.source() != "none");
  out[1].set_ok(out[1].ok() && sensors.numa_active);
  return out;
}

v1::Action ToAction(const Action& action, uint64_t tick,
                    const ActionResult* result) {
  v1::Action out = ToProtoAction(action, tick);
  if (result == nullptr) return out;
  if (out.has_migrate_pages()) {
    out.mutable_migrate_pages()->set_moved_bytes(result->bytes_moved);
  }
  out.set_outcome(ToOutcome(result->outcome,
                            std::holds_alternative<SetIrqAffinity>(action.op)));
  if (out.outcome() != v1::ACTION_OUTCOME_APPLIED &&
      out.outcome() != v1::ACTION_OUTCOME_DRY_RUN) {
    out.set_error(result->message);
  }
  return out;
}

v1::Metrics ToMetrics(const TickReport& report, const MetricsContext& context) {
  v1::Metrics out;
  int64_t wall_ns = absl::ToUnixNanos(context.wall_time);
  if (report.snapshot != nullptr) {
    FillMetricsFromSnapshot(*report.snapshot, report.tick, wall_ns, &out);
    // What the snapshot cannot know: pages this tick's actions moved, and
    // which entities the loop holds down.
    absl::flat_hash_set<EntityKey> held(report.held_down.begin(),
                                        report.held_down.end());
    for (v1::NodeMetrics& node : *out.mutable_nodes()) {
      uint64_t pages = 0;
      for (const ActionRecord& record : report.actions) {
        const auto* move = std::get_if<MigratePages>(&record.action.op);
        if (move != nullptr && move->to_node == node.node()) {
          pages += record.result.pages_moved;
        }
      }
      node.set_pages_migrated(pages);
    }
    for (v1::TaskMetrics& task : *out.mutable_tasks()) {
      task.set_held_down(
          held.contains(EntityKey{EntityKind::kTask, task.pid()}));
    }
    for (v1::IrqMetrics& irq : *out.mutable_irqs()) {
      irq.set_held_down(held.contains(EntityKey{EntityKind::kIrq, irq.irq()}));
    }
  } else {
    out.set_tick(report.tick);
    *out.mutable_time() = TimeUtil::NanosecondsToTimestamp(wall_ns);
  }
  out.set_tick_period_ns(absl::ToInt64Nanoseconds(context.period));
  out.set_tick_duration_ns(absl::ToInt64Nanoseconds(report.took));
  out.set_overruns_total(report.overruns);
  out.set_mode(ToAgentMode(report.mode));
  for (const ActionRecord& record : report.actions) {
    *out.add_actions() = ToAction(record.action, report.tick, &record.result);
  }
  for (const RevertRecord& revert : report.reverts) {
    v1::Revert* m = out.add_reverts();
    m->set_tick(report.tick);
    *m->mutable_action() =
        ToAction(revert.verdict.action, report.tick, nullptr);
    m->set_reason(absl::StrCat(
        "objective ", static_cast<int>(revert.verdict.before * 100), "% -> ",
        static_cast<int>(revert.verdict.after * 100), "% after the action"));
    m->set_outcome(revert.status.ok() ? v1::ACTION_OUTCOME_APPLIED
                                      : v1::ACTION_OUTCOME_FAILED);
    if (!revert.status.ok()) m->set_error(revert.status.ToString());
  }
  for (const ExternalEvent& event : report.external) {
    v1::ExternalChange* m = out.add_external_changes();
    m->set_tick(report.tick);
    bool irq = event.key.kind == EntityKind::kIrq;
    m->set_tid(irq ? 0 : event.key.id);
    m->set_irq(irq ? event.key.id : -1);
    m->set_what(irq ? "irq affinity" : "thread affinity");
    m->set_detail(event.message);
  }
  *out.mutable_policy() = ToPolicyState(report.policy);
  for (v1::SensorSource& s : ToSensorSources(context.sensors)) {
    *out.add_sensors() = std::move(s);
  }
  uint64_t dropped = 0;
  for (const auto& [name, count] : context.sensors.drops) dropped += count;
  out.mutable_drops()->set_sensor_events_dropped_total(dropped);
  return out;
}

}  // namespace locus
