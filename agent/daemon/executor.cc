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
                                   SteeringParts steering,
                                   NeighbourOps neighbours)
    : actuators_(std::move(actuators)),
      parts_(std::move(steering)),
      steering_journal_(actuators_->mutable_journal()),
      steering_(parts_.ops.get(), &steering_journal_) {
  if (neighbours.irqbalance && neighbours.numad) {
    neighbours_ = std::make_unique<Neighbours>(std::move(neighbours),
                                               actuators_->mutable_journal());
  }
}

ActionResult ActuatorExecutor::Apply(const Action& action, bool dry_run) {
  absl::MutexLock lock(&mu_);
  const auto* irq = std::get_if<SetIrqAffinity>(&action.op);
  if (irq != nullptr && !dry_run && neighbours_ != nullptr) {
    // Moved only once irqbalance has let go of it, so that it does not
    // move it back (and the move is not taken for someone else's).
    if (std::optional<std::string> why = neighbours_->WaitFor(irq->irq)) {
      return MakeResult(Outcome::kWaiting, *std::move(why));
    }
  }
  return actuators_->Apply(action, dry_run);
}

void ActuatorExecutor::TickNeighbours(const v1::Coexist& coexist,
                                      std::optional<int> numa_balancing) {
  absl::MutexLock lock(&mu_);
  if (neighbours_ == nullptr) return;
  CoexistModes modes;
  modes.irqbalance_ban =
      coexist.irqbalance() != v1::Coexist::IRQBALANCE_MODE_OFF;
  modes.numad_exclude = coexist.numad() != v1::Coexist::NUMAD_MODE_OFF;
  neighbours_->Tick(modes, numa_balancing, absl::Now());
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
  std::optional<NeighbourRestoreOps> neighbour_ops;
  if (neighbours_ != nullptr) neighbour_ops = neighbours_->restore_ops();
  absl::StatusOr<RestoreReport> report = actuators_->RestoreAll(
      &restore_ops, neighbour_ops ? &*neighbour_ops : nullptr);
  if (report.ok()) {
    for (const std::string& line : report->messages) {
      Log(RestoreEntry(false, line));
    }
    for (const std::string& line : report->errors)
      Log(RestoreEntry(true, line));
    if (const std::string kept = KeptRecordsLine(*report); !kept.empty()) {
      LogWarning(kept);
    }
  }
  return report;
}

absl::Status ActuatorExecutor::RestoreAll() {
  {
    absl::MutexLock lock(&mu_);
    if (neighbours_ != nullptr) {
      neighbours_->Finish(neighbours_->restore_ops().timeout);
    }
  }
  return PutBack();
}

absl::Status ActuatorExecutor::PutBack() {
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
         contents.steered.size() + contents.irqbalance_bans.size() +
         contents.numad_exclusions.size();
}

std::string ActuatorExecutor::journal_error() {
  absl::MutexLock lock(&mu_);
  return std::string(actuators_->journal().last_error().message());
}

std::set<int> ActuatorExecutor::unmanageable_irqs() {
  absl::MutexLock lock(&mu_);
  return actuators_->unmanageable_irqs();
}

namespace {

template <typename T>
void SetInts(const std::set<T>& from,
             google::protobuf::RepeatedField<int32_t>* to) {
  to->Assign(from.begin(), from.end());
}

}  // namespace

std::vector<v1::Neighbour> ActuatorExecutor::neighbours() {
  absl::MutexLock lock(&mu_);
  if (neighbours_ == nullptr) return {};
  const CoexistModes& modes = neighbours_->modes();
  std::vector<v1::Neighbour> out(4);
  const IrqbalanceState& irqbalance = neighbours_->irqbalance();
  out[0].set_name("irqbalance");
  out[0].set_mode(modes.irqbalance_ban ? "ban" : "off");
  out[0].set_running(irqbalance.running);
  out[0].set_pid(irqbalance.pid);
  out[0].set_socket(irqbalance.socket);
  SetInts(irqbalance.banned_by_locus, out[0].mutable_irqs_banned());
  SetInts(irqbalance.banned_by_others, out[0].mutable_irqs_banned_by_others());
  SetInts(irqbalance.pending, out[0].mutable_irqs_pending());
  out[0].set_restarts(irqbalance.restarts);
  out[0].set_problem(irqbalance.problem);
  out[0].mutable_look_alikes()->Assign(irqbalance.look_alikes.begin(),
                                       irqbalance.look_alikes.end());
  const NumadState& numad = neighbours_->numad();
  out[1].set_name("numad");
  out[1].set_mode(modes.numad_exclude ? "exclude" : "off");
  out[1].set_running(numad.running);
  out[1].set_pid(numad.pid);
  SetInts(numad.excluded, out[1].mutable_pids_excluded());
  out[1].set_restarts(numad.restarts);
  out[1].set_problem(numad.problem);
  out[1].mutable_look_alikes()->Assign(numad.look_alikes.begin(),
                                       numad.look_alikes.end());
  const HostTuners& tuners = neighbours_->tuners();
  out[2].set_name("autonuma");
  out[2].set_running(tuners.state().numa_balancing > 0);
  out[2].set_note(tuners.AutonumaNote());
  out[3].set_name("tuned");
  out[3].set_running(tuners.state().tuned_pid != 0);
  out[3].set_pid(tuners.state().tuned_pid);
  out[3].set_note(tuners.TunedNote());
  return out;
}

}  // namespace locus
