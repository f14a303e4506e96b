#include "agent/core/loop.h"

#include <type_traits>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "policy/cpu_list.h"
#include "policy/decide.h"

namespace locus {

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
           Executor* executor, Sink sink, Clock clock)
    : options_(std::move(options)),
      source_(source),
      policy_(policy),
      executor_(executor),
      sink_(std::move(sink)),
      clock_(std::move(clock)),
      verifier_(options_.verifier),
      mode_override_(options_.mode) {}

void Loop::SetMode(Mode mode) { mode_override_.store(mode); }

Mode Loop::mode() const {
  PolicyState state = policy_->Current();
  return EffectiveMode(*state.policy);
}

Mode Loop::EffectiveMode(const v1::Policy& policy) const {
  Mode mode = static_cast<Mode>(mode_override_.load());
  if (mode != v1::Policy::MODE_UNSPECIFIED) return mode;
  return policy.mode() == v1::Policy::MODE_DRY_RUN ? v1::Policy::MODE_DRY_RUN
                                                   : v1::Policy::MODE_ENFORCE;
}

TickReport Loop::Tick() {
  TickReport report;
  uint64_t start = clock_();
  report.tick = ticks_.fetch_add(1) + 1;
  report.now_ns = start;
  report.policy = policy_->Current();
  const v1::Policy& policy = *report.policy.policy;
  report.mode = EffectiveMode(policy);
  uint64_t hold_ns = static_cast<uint64_t>(policy.stability().hold_down_s()) *
                     1'000'000'000ull;

  // Someone else moved an entity after Locus did: leave it to them.
  report.external = executor_->TakeExternalChanges();
  for (const ExternalEvent& event : report.external) {
    verifier_.Forget(event.key);
    EntityHistory& entry = history_.entities[event.key];
    entry.held_until_ns =
        start + absl::ToInt64Nanoseconds(options_.external_hold);
    entry.node = -1;
    LogWarning(event.message, " → backing off");
    Note(event.key, report.tick, start,
         absl::StrCat("changed by someone else: ", event.message,
                      "; backed off"));
  }

  absl::StatusOr<Snapshot> snapshot = source_->Collect();
  if (!snapshot.ok()) {
    // Keep the last good state: no decisions on a snapshot we do not have.
    report.collect_status = snapshot.status();
    LogError("collecting the snapshot failed: ", snapshot.status().ToString());
  } else {
    auto shared = std::make_shared<const Snapshot>(*std::move(snapshot));
    report.snapshot = shared;
    const Snapshot& snap = *shared;
    RememberThreads(snap);

    for (Verdict& verdict : verifier_.Observe(snap)) {
      absl::Status status = executor_->Revert(verdict.action);
      HoldDown(history_, verdict.action, snap.now_ns + hold_ns);
      std::string what = absl::StrCat(
          "objective got worse (", static_cast<int>(verdict.before * 100),
          "% → ", static_cast<int>(verdict.after * 100), "%) after ",
          Describe(verdict.action), " → ",
          status.ok() ? "reverted" : "revert failed: " + status.ToString(),
          ", held down ", policy.stability().hold_down_s(), " s");
      LogWarning(what);
      Note(KeyOf(verdict.action), report.tick, start, what);
      report.reverts.push_back(RevertRecord{std::move(verdict), status});
    }
    PruneHistory(history_, snap);

    report.plan = Decide(snap, policy, history_);
    // Why the plan is empty (or what it left out), once, not every tick.
    if (report.plan.notes != last_notes_) {
      for (const std::string& note : report.plan.notes) LogInfo("plan: ", note);
      last_notes_ = report.plan.notes;
    }
    bool dry_run = report.mode == v1::Policy::MODE_DRY_RUN;
    if (!dry_run) {
      last_dry_run_.clear();
    } else {
      absl::erase_if(last_dry_run_, [&](const auto& entry) {
        return entry.second.last_ns + 60'000'000'000ull < start;
      });
    }
    for (const Action& action : report.plan.actions) {
      ActionResult result;
      if (dry_run) {
        std::string planned = Describe(action);
        if (auto last = last_dry_run_.find(planned);
            last != last_dry_run_.end()) {
          // Planned again: on the stream, not in the log.
          last->second.last_ns = start;
          report.actions.push_back(ActionRecord{action, last->second.result});
          continue;
        }
        result = executor_->Apply(action, true);
        // Only what a dry run would do repeats unchanged; a refusal is held
        // down below like in enforce mode.
        if (result.outcome == Outcome::kDryRun)
          last_dry_run_[std::move(planned)] = DryRun{result, start};
      } else {
        result = executor_->Apply(action, false);
      }
      switch (result.outcome) {
        case Outcome::kApplied: {
          // The node the move left is the one the actuator found: the host
          // model is refreshed on its own thread, and an IRQ someone else
          // moved since (irqbalance) would otherwise be recorded as taken
          // from where it was before, and its hold-down would guard the
          // wrong node.
          Action applied = action;
          if (!result.cpus_before.empty()) {
            applied.from_node = NodeOfCpus(snap.topology, result.cpus_before);
          }
          RecordApplied(history_, applied, snap.topology, snap.now_ns);
          verifier_.Watch(action, snap);
          break;
        }
        case Outcome::kUnchanged:
          if (std::holds_alternative<MigratePages>(action.op)) {
            // Finding nothing to move is not a move: the memory's dwell
            // runs from its last real one. A whole pass that found nothing
            // ends the migration under way (Decide stops finishing it).
            if (result.nothing_left)
              RecordSettled(history_, action, snap.now_ns);
          } else {
            RecordApplied(history_, action, snap.topology, snap.now_ns);
          }
          break;
        case Outcome::kDryRun:
        case Outcome::kGone:
          break;
        default:
          // Refused or failed: trying again next tick would fail the same
          // way (a cpuset, a managed IRQ, a node the kernel lacks), so the
          // entity rests like a reverted one, and the log says so once.
          HoldDown(history_, action, snap.now_ns + hold_ns);
          absl::StrAppend(&result.message, "; left alone for ",
                          policy.stability().hold_down_s(), " s");
          break;
      }
      std::string what = absl::StrCat(action.reason, " → ", Describe(action),
                                      ": ", OutcomeName(result.outcome));
      if (!result.message.empty())
        absl::StrAppend(&what, " (", result.message, ")");
      Log(result.outcome == Outcome::kApplied ||
                  result.outcome == Outcome::kDryRun
              ? LogLevel::kInfo
              : LogLevel::kWarning,
          what);
      Note(KeyOf(action), report.tick, start, what);
      report.actions.push_back(ActionRecord{action, std::move(result)});
    }
  }

  for (const auto& [key, entry] : history_.entities) {
    if (entry.held_until_ns > start) report.held_down.push_back(key);
  }

  uint64_t end = clock_();
  report.took = absl::Nanoseconds(end - start);
  if (report.took > options_.tick) overruns_.fetch_add(1);
  report.overruns = overruns_.load();
  sink_(report);
  return report;
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

void Loop::Note(EntityKey key, uint64_t tick, uint64_t now_ns,
                std::string what) {
  absl::MutexLock lock(&explain_mu_);
  std::deque<Decision>& story = explain_[key];
  story.push_back(Decision{tick, now_ns, std::move(what)});
  while (story.size() > options_.explain_depth) story.pop_front();
}

void Loop::RememberThreads(const Snapshot& snapshot) {
  absl::MutexLock lock(&explain_mu_);
  tid_pid_.clear();
  for (const Target& target : snapshot.targets) {
    tid_pid_[target.pid] = target.pid;
    for (const ThreadSample& thread : target.threads) {
      tid_pid_[thread.tid] = target.pid;
    }
  }
  // Forget the stories of processes that are gone, so memory stays bounded.
  absl::erase_if(explain_, [&](const auto& entry) {
    return entry.first.kind != EntityKind::kIrq &&
           !tid_pid_.contains(entry.first.id);
  });
}

std::vector<Decision> Loop::ExplainTask(int32_t tid) const {
  absl::MutexLock lock(&explain_mu_);
  auto pid = tid_pid_.find(tid);
  int32_t id = pid == tid_pid_.end() ? tid : pid->second;
  std::vector<Decision> out;
  for (EntityKind kind : {EntityKind::kTask, EntityKind::kMemory}) {
    auto it = explain_.find(EntityKey{kind, id});
    if (it != explain_.end())
      out.insert(out.end(), it->second.begin(), it->second.end());
  }
  std::sort(out.begin(), out.end(), [](const Decision& a, const Decision& b) {
    return a.tick < b.tick;
  });
  return out;
}

std::vector<Decision> Loop::ExplainIrq(int irq) const {
  absl::MutexLock lock(&explain_mu_);
  auto it = explain_.find(EntityKey{EntityKind::kIrq, irq});
  if (it == explain_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

}  // namespace locus
