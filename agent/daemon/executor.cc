#include "agent/daemon/executor.h"

#include "absl/strings/str_join.h"
#include "agent/core/event_log.h"
#include "common/log.h"
#include "common/status_macros.h"

namespace locus {
namespace {

ReuseportPathCounts Minus(const ReuseportPathCounts& now,
                          const ReuseportPathCounts& before) {
  // A group attached again starts its counters afresh: no negative deltas.
  auto d = [](uint64_t a, uint64_t b) { return a >= b ? a - b : a; };
  return {d(now.local, before.local), d(now.spilled, before.spilled),
          d(now.fallback, before.fallback), d(now.migrated, before.migrated),
          d(now.control, before.control)};
}

std::map<int, ReuseportPathCounts> ByNode(const ReuseportCounters& counters) {
  std::map<int, ReuseportPathCounts> out = counters.nodes;
  if (counters.no_node != ReuseportPathCounts{}) out[-1] = counters.no_node;
  return out;
}

// The plan's groups by their key, found among the listed groups by name.
SteeringPlan KeyedPlan(const std::vector<ListenGroupSteering>& plan,
                       const std::vector<ListenGroup>& groups) {
  std::map<std::string, const ListenKey*> key_of;
  for (const ListenGroup& group : groups) {
    key_of[ListenKeyString(group.key)] = &group.key;
  }
  SteeringPlan keyed;
  for (const ListenGroupSteering& steer : plan) {
    auto key = key_of.find(steer.group);
    if (key == key_of.end()) continue;  // gone since the snapshot
    GroupSteering& group = keyed[*key->second];
    for (const NodeSteering& node : steer.nodes) {
      group.nodes[node.node] = NodeSockets{node.inodes, node.spill_permille};
    }
    group.control = steer.control_inodes;
  }
  return keyed;
}

// Why a listed group is not steered when the actuator has nothing to say.
std::string NotPlanned(const ListenGroup& group,
                       const std::vector<ListenGroupSteering>& plan) {
  if (FindSteering(plan, ListenKeyString(group.key)) != nullptr) return "";
  if (!group.reuseport()) return "one socket: nginx listens without reuseport";
  return "not steered by the policy (connections.enabled, connections.ports)";
}

}  // namespace

ActuatorExecutor::ActuatorExecutor(std::unique_ptr<Actuators> actuators,
                                   SteeringParts steering)
    : actuators_(std::move(actuators)),
      parts_(std::move(steering)),
      steering_journal_(actuators_->mutable_journal()),
      steering_(parts_.ops.get(), &steering_journal_) {}

ActionResult ActuatorExecutor::Apply(const Action& action, bool dry_run) {
  absl::MutexLock lock(&mu_);
  return actuators_->Apply(action, dry_run);
}

absl::Status ActuatorExecutor::Revert(const Action& action) {
  absl::MutexLock lock(&mu_);
  return actuators_->Revert(action);
}

std::vector<ExternalEvent> ActuatorExecutor::TakeExternalChanges() {
  absl::MutexLock lock(&mu_);
  std::vector<ExternalEvent> events;
  for (const ExternalChange& change : actuators_->CheckExternalChanges()) {
    bool irq = change.kind == ExternalChange::Kind::kIrq;
    events.push_back(
        ExternalEvent{EntityKey{irq ? EntityKind::kIrq : EntityKind::kTask,
                                irq ? change.id : change.pid},
                      change.message, irq ? 0 : change.id});
  }
  return events;
}

std::vector<SteeringState> ActuatorExecutor::SteerConnections(
    const std::vector<ListenGroupSteering>& plan,
    const std::vector<int>& node_of_cpu, bool dry_run) {
  std::vector<ListenGroup> groups = parts_.groups();
  absl::MutexLock lock(&mu_);
  if (dry_run) {
    // A dry run changes nothing: what an earlier enforce tick attached goes.
    if (absl::Status detached = steering_.DetachAll(); !detached.ok()) {
      LogError("connection steering: ", detached.message());
    }
    return StatesOf(groups, plan, "dry_run: not attached");
  }
  steering_.Apply(groups, node_of_cpu, KeyedPlan(plan, groups));
  return StatesOf(groups, plan, "");
}

std::vector<SteeringState> ActuatorExecutor::StatesOf(
    const std::vector<ListenGroup>& groups,
    const std::vector<ListenGroupSteering>& plan, const std::string& dry_run) {
  std::map<ListenKey, SteeringGroupStatus> status = steering_.status();
  std::vector<SteeringState> states;
  std::map<std::string, std::map<int, ReuseportPathCounts>> counts;
  for (const ListenGroup& group : groups) {
    SteeringState state;
    state.group = ListenKeyString(group.key);
    state.sockets = group.sockets.size();
    state.problem = NotPlanned(group, plan);
    if (state.problem.empty()) state.problem = dry_run;
    if (auto it = status.find(group.key); it != status.end()) {
      state.steered = it->second.attached;
      state.migrates = it->second.migrates;
      state.problem = it->second.problem;
    }
    if (absl::StatusOr<ReuseportCounters> read = steering_.Counters(group.key);
        read.ok()) {
      state.total = ByNode(*read);
      const auto& before = last_counts_[state.group];
      for (const auto& [node, now] : state.total) {
        auto it = before.find(node);
        state.tick[node] = it == before.end() ? now : Minus(now, it->second);
      }
      counts[state.group] = state.total;
    }
    states.push_back(std::move(state));
  }
  last_counts_ = std::move(counts);
  return states;
}

void ActuatorExecutor::StopPageMoves() { actuators_->StopPageMoves(); }

absl::StatusOr<RestoreReport> ActuatorExecutor::RestoreAllWithReport() {
  absl::MutexLock lock(&mu_);
  if (absl::Status detached = steering_.DetachAll(); !detached.ok()) {
    // Their records stay: the restore below looks for them again.
    LogError("connection steering: ", detached.message());
  }
  const SteeringRestoreOps restore_ops{parts_.ops.get(), parts_.finder.get()};
  absl::StatusOr<RestoreReport> report = actuators_->RestoreAll(&restore_ops);
  if (report.ok()) {
    for (const std::string& line : report->messages) {
      Log(RestoreEntry(false, line));
    }
    for (const std::string& line : report->errors)
      Log(RestoreEntry(true, line));
  }
  return report;
}

absl::Status ActuatorExecutor::RestoreAll() {
  ASSIGN_OR_RETURN(RestoreReport report, RestoreAllWithReport());
  if (!report.ok()) {
    return absl::InternalError(absl::StrJoin(report.errors, "; "));
  }
  return absl::OkStatus();
}

uint32_t ActuatorExecutor::journal_entries() {
  absl::MutexLock lock(&mu_);
  const JournalContents& contents = actuators_->journal().contents();
  return contents.threads.size() + contents.irqs.size() +
         contents.steered.size();
}

std::string ActuatorExecutor::journal_error() {
  absl::MutexLock lock(&mu_);
  return std::string(actuators_->journal().last_error().message());
}

std::set<int> ActuatorExecutor::unmanageable_irqs() {
  absl::MutexLock lock(&mu_);
  return actuators_->unmanageable_irqs();
}

}  // namespace locus
