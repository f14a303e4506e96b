#include "agent/core/loop.h"

#include <algorithm>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "agent/core/event_log.h"
#include "common/log.h"
#include "policy/cpu_list.h"
#include "policy/decide.h"
#include "policy/experiment_arms.h"
#include "policy/pressure.h"

namespace locus {
namespace {

// How long a dry run's planned action is remembered (Loop::last_dry_run_).
constexpr uint64_t kDryRunMemoryNs = 60'000'000'000ull;

uint64_t HoldDownNs(const v1::Policy& policy) {
  return static_cast<uint64_t>(policy.stability().hold_down_s()) *
         1'000'000'000ull;
}

}  // namespace

std::string Describe(const Action& action) {
  return std::visit(
      [](const auto& op) -> std::string {
        using T = std::decay_t<decltype(op)>;
        if constexpr (std::is_same_v<T, PinThread>) {
          return absl::StrCat("pin pid ", op.pid, " tid ", op.tid, " to node ",
                              op.node, " cpus ", FormatCpuList(op.cpus));
        } else if constexpr (std::is_same_v<T, MigratePages>) {
          return absl::StrCat(
              "migrate up to ", op.max_bytes >> 20, " MiB of pid ", op.pid,
              op.from_node >= 0 ? absl::StrCat(" from node ", op.from_node)
                                : std::string(),
              " to node ", op.to_node);
        } else {
          return absl::StrCat("irq ", op.irq, " to cpus ",
                              FormatCpuList(op.cpus));
        }
      },
      action.op);
}

Loop::Loop(LoopOptions options, SnapshotSource* source, PolicySource* policy,
           Executor* executor, Sink sink, Clock* clock)
    : options_(std::move(options)),
      source_(source),
      policy_(policy),
      executor_(executor),
      sink_(std::move(sink)),
      clock_(clock),
      verifier_(options_.verifier),
      mode_override_(options_.mode),
      explain_(options_.explain_depth) {}

void Loop::SetMode(Mode mode) { mode_override_.store(mode); }

Mode Loop::mode() const {
  PolicyState state = policy_->Current();
  return EffectiveMode(*state.policy);
}

Mode Loop::EffectiveMode(const v1::Policy& policy) const {
  Mode mode = static_cast<Mode>(mode_override_.load());
  if (mode != v1::Policy::MODE_UNSPECIFIED) return mode;
  return PolicyMode(policy);
}

TickReport Loop::Tick() {
  const uint64_t cpu_start_ns = ThreadCpuNs();
  TickReport report = Begin();
  if (report.mode == v1::Policy::MODE_DRY_RUN) executor_->StopPageMoves();
  BackOffExternalChanges(report);
  const bool collected = CollectSnapshot(report);
  // Before acting, and even without a snapshot: what Locus holds stays
  // handed over, a restarted irqbalance or numad is told again, and the
  // first tick's IRQ moves find irqbalance looked for (or known absent)
  // rather than wait a tick for an irqbalance of no pid.
  executor_->TickNeighbours(
      report.policy.policy->coexist(),
      collected ? std::optional<int>(report.snapshot->numa_balancing_mode)
                : std::nullopt);
  if (collected) {
    // Shared with the report, which outlives this tick on the stream.
    std::shared_ptr<const Snapshot> snap = report.snapshot;
    explain_.RememberThreads(*snap);
    refusal_log_.Report(explain_.RememberRefused(*snap), report.now_ns);
    RevertWhatGotWorse(*snap, report);
    PlanFor(*snap, Arms(*snap, report), report);
    for (const Action& action : report.plan.actions) {
      Act(action, *snap, report);
    }
    Steer(*snap, report);
  }
  Publish(report, cpu_start_ns);
  return report;
}

TickReport Loop::Begin() {
  TickReport report;
  report.now_ns = clock_->NowNs();
  report.tick = ticks_.fetch_add(1) + 1;
  report.policy = policy_->Current();
  report.mode = EffectiveMode(*report.policy.policy);
  return report;
}

// Someone else moved an entity after Locus did: leave it to them.
void Loop::BackOffExternalChanges(TickReport& report) {
  report.external = executor_->TakeExternalChanges();
  for (const ExternalEvent& event : report.external) {
    verifier_.Forget(event.key);
    EntityHistory& entry = history_.entities[event.key];
    entry.held_until_ns =
        report.now_ns + absl::ToInt64Nanoseconds(options_.external_hold);
    entry.node = -1;
    Log(ExternalChangeEntry(event,
                            absl::StrCat(event.message, " → backing off")));
    explain_.Note(event.key, report.tick, report.now_ns,
                  absl::StrCat("changed by someone else: ", event.message,
                               "; backed off"));
  }
}

bool Loop::CollectSnapshot(TickReport& report) {
  absl::StatusOr<Snapshot> snapshot = source_->Collect();
  if (!snapshot.ok()) {
    // Keep the last good state: no decisions on a snapshot we do not have.
    report.collect_status = snapshot.status();
    LogError("collecting the snapshot failed: ", snapshot.status().ToString());
    return false;
  }
  report.snapshot = std::make_shared<const Snapshot>(*std::move(snapshot));
  return true;
}

void Loop::RevertWhatGotWorse(const Snapshot& snap, TickReport& report) {
  const v1::Policy& policy = *report.policy.policy;
  for (Verdict& verdict : verifier_.Observe(snap)) {
    absl::Status status = executor_->Revert(verdict.action);
    HoldDown(history_, verdict.action, snap.now_ns + HoldDownNs(policy));
    std::string what = absl::StrCat(
        "objective got worse (", static_cast<int>(verdict.before * 100), "% → ",
        static_cast<int>(verdict.after * 100), "%) after ",
        Describe(verdict.action), " → ",
        status.ok() ? "reverted" : "revert failed: " + status.ToString(),
        ", held down ", policy.stability().hold_down_s(), " s");
    Log(RevertEntry(verdict.action, status, what));
    explain_.Note(KeyOf(verdict.action), report.tick, report.now_ns, what);
    report.reverts.push_back(RevertRecord{std::move(verdict), status});
  }
}

void Loop::PlanFor(const Snapshot& snap, const ArmsThisTick& arms,
                   TickReport& report) {
  PruneHistory(history_, snap);
  ObservePressure(history_, snap, *report.policy.policy);
  if (arms.untreated.empty()) {
    report.plan = Decide(snap, *report.policy.policy, history_);
    HoldLevers(arms.levers, report.plan);  // a switchback's on block
  } else {
    report.plan = Decide(WithoutUnits(snap, arms.untreated),
                         *report.policy.policy, history_);
    FitPlanToArms(snap, arms.untreated, arms.levers, report.plan);
  }
  // Why the plan is empty (or what it left out), once, not every tick: a
  // note the last tick had too is not logged again.
  for (const std::string& note : report.plan.notes) {
    if (std::find(last_notes_.begin(), last_notes_.end(), note) ==
        last_notes_.end())
      LogInfo("plan: ", note);
  }
  last_notes_ = report.plan.notes;
  if (report.mode != v1::Policy::MODE_DRY_RUN) {
    last_dry_run_.clear();
  } else {
    absl::erase_if(last_dry_run_, [&](const auto& entry) {
      return entry.second.last_ns + kDryRunMemoryNs < report.now_ns;
    });
  }
}

void Loop::Act(const Action& action, const Snapshot& snap, TickReport& report) {
  ActionResult result;
  if (report.mode == v1::Policy::MODE_DRY_RUN) {
    std::string planned = Describe(action);
    if (const ActionResult* last = PlannedAgain(planned, report.now_ns)) {
      // Planned again: on the stream, not in the log.
      report.actions.push_back(ActionRecord{action, *last});
      return;
    }
    result = executor_->Apply(action, true);
    // Only what a dry run would do repeats unchanged; a refusal is held
    // down below like in enforce mode.
    if (result.outcome == Outcome::kDryRun)
      last_dry_run_[std::move(planned)] = DryRun{result, report.now_ns};
  } else {
    result = executor_->Apply(action, false);
  }
  Record(action, snap, *report.policy.policy, result);
  // The plan keeps to every cpuset it knows: a refusal means the snapshot
  // missed one (or it changed since), which the count makes visible.
  if (result.outcome == Outcome::kForbidden) ++forbidden_;
  Tell(action, result, report);
  report.actions.push_back(ActionRecord{action, std::move(result)});
}

// After the pins, so that a worker moved this tick takes its socket along.
// The spill each group applies is remembered for the next decision.
void Loop::Steer(const Snapshot& snap, TickReport& report) {
  const bool dry_run = report.mode == v1::Policy::MODE_DRY_RUN;
  report.connections = executor_->SteerConnections(
      report.plan.connections, snap.topology.cpu_node, dry_run);
  if (experiment_ != nullptr) experiment_->OnConnections(report.connections);
  // A planned group's problem is logged when it changes (groups the plan
  // left out are in its notes already); only this tick's groups are kept.
  std::map<std::string, std::string> problems;
  for (const SteeringState& state : report.connections) {
    if (FindSteering(report.plan.connections, state.group) == nullptr) continue;
    auto last = last_steering_.find(state.group);
    const bool logged =
        last != last_steering_.end() && last->second == state.problem;
    if (!logged && !state.problem.empty())
      LogWarning("connections: ", state.group, ": ", state.problem);
    problems[state.group] = state.problem;
  }
  last_steering_ = std::move(problems);
  history_.spill_permille.clear();
  SocketNodes told;
  for (const ListenGroupSteering& steer : report.plan.connections) {
    auto state = std::find_if(
        report.connections.begin(), report.connections.end(),
        [&](const SteeringState& s) { return s.group == steer.group; });
    if (state == report.connections.end() || !state->steered) continue;
    for (const NodeSteering& node : steer.nodes) {
      history_.spill_permille[steer.group][node.node] = node.spill_permille;
    }
    TellSockets(snap, steer, report, told);
  }
  socket_node_ = std::move(told);  // only the sockets of this tick's groups
}

// Explain says, once per change, which node a worker's socket serves.
void Loop::TellSockets(const Snapshot& snap, const ListenGroupSteering& steer,
                       const TickReport& report, SocketNodes& told) {
  std::map<uint64_t, int32_t> owner;
  for (const ListenGroupSample& group : snap.listen_groups) {
    if (group.name != steer.group) continue;
    for (const ListenSocketSample& socket : group.sockets)
      owner[socket.inode] = socket.owner_pid;
  }
  for (const NodeSteering& node : steer.nodes) {
    for (uint64_t inode : node.inodes) {
      const int32_t pid = owner[inode];
      if (pid == 0) continue;
      const std::pair<std::string, int32_t> key{steer.group, pid};
      told[key] = node.node;
      auto last = socket_node_.find(key);
      if (last != socket_node_.end() && last->second == node.node) continue;
      explain_.Note({EntityKind::kTask, pid}, report.tick, report.now_ns,
                    absl::StrCat("its listening socket in ", steer.group,
                                 " takes the new connections received on "
                                 "node ",
                                 node.node));
    }
  }
}

const ActionResult* Loop::PlannedAgain(const std::string& planned,
                                       uint64_t now_ns) {
  auto last = last_dry_run_.find(planned);
  if (last == last_dry_run_.end()) return nullptr;
  last->second.last_ns = now_ns;
  return &last->second.result;
}

void Loop::Record(const Action& action, const Snapshot& snap,
                  const v1::Policy& policy, ActionResult& result) {
  switch (result.outcome) {
    case Outcome::kApplied: {
      // The node the move left is the one the actuator found: the host
      // model is refreshed on its own thread, and an IRQ someone else moved
      // since (irqbalance) would be recorded as taken from where it was
      // before, its hold-down guarding the wrong node.
      Action applied = action;
      if (!result.cpus_before.empty()) {
        applied.from_node = FromNodeOf(snap.topology, result.cpus_before);
      }
      RecordApplied(history_, applied, snap.topology, snap.now_ns);
      // A widened soft home trades locality for CPU on purpose (judged on
      // locality it would be reverted; Decide narrows it when its home is
      // calm) and ends the watch of the pin before it, not that pin's harm.
      if (const auto* pin = std::get_if<PinThread>(&action.op);
          pin != nullptr && Widens(*pin)) {
        verifier_.Forget(KeyOf(action));
      } else {
        verifier_.Watch(action, snap);
      }
      break;
    }
    case Outcome::kUnchanged:
      if (std::holds_alternative<MigratePages>(action.op)) {
        // Finding nothing to move is not a move: the memory's dwell
        // runs from its last real one. A whole pass that found nothing
        // ends the migration under way (Decide stops finishing it).
        if (result.nothing_left) RecordSettled(history_, action, snap.now_ns);
      } else {
        RecordApplied(history_, action, snap.topology, snap.now_ns);
      }
      break;
    case Outcome::kDryRun:
    case Outcome::kGone:
    case Outcome::kWaiting:  // planned again next tick, once banned
      break;
    default:
      // Refused or failed: trying again next tick would fail the same
      // way (a cpuset, a managed IRQ, a node the kernel lacks), so the
      // entity rests like a reverted one, and the log says so once.
      HoldDown(history_, action, snap.now_ns + HoldDownNs(policy));
      absl::StrAppend(&result.message, "; left alone for ",
                      policy.stability().hold_down_s(), " s");
      break;
  }
}

// The log line and the entity's note for an action just tried.
void Loop::Tell(const Action& action, const ActionResult& result,
                const TickReport& report) {
  std::string what = absl::StrCat(action.reason, " → ", Describe(action), ": ",
                                  OutcomeName(result.outcome));
  if (!result.message.empty())
    absl::StrAppend(&what, " (", result.message, ")");
  Log(ActionEntry(action, result, what));
  explain_.Note(KeyOf(action), report.tick, report.now_ns, std::move(what));
}

void Loop::Publish(TickReport& report, uint64_t cpu_start_ns) {
  for (const auto& [key, entry] : history_.entities) {
    if (entry.held_until_ns > report.now_ns) report.held_down.push_back(key);
    if (key.kind == EntityKind::kTask && entry.node >= 0) {
      report.homes[key.id] = {entry.node, entry.spill_node};
    }
  }
  report.took = absl::Nanoseconds(clock_->NowNs() - report.now_ns);
  report.cpu = absl::Nanoseconds(ThreadCpuNs() - cpu_start_ns);
  if (report.took > options_.tick) overruns_.fetch_add(1);
  report.overruns = overruns_.load();
  report.forbidden = forbidden_.load();
  sink_(report);
}

void Loop::Run(absl::Notification& stop) {
  absl::Time next = absl::Now();
  while (!stop.HasBeenNotified()) {
    Tick();
    next += options_.tick;
    absl::Time now = absl::Now();
    if (next < now) next = now;  // overran: start again now, no catch-up burst
    stop.WaitForNotificationWithTimeout(next - now);
  }
}

}  // namespace locus
