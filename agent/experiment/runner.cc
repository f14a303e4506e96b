#include "agent/experiment/runner.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "agent/api/prometheus_labels.h"
#include "agent/core/event_log.h"
#include "agent/experiment/arm_figures.h"
#include "agent/experiment/cpu_clock.h"
#include "agent/experiment/pmu.h"
#include "agent/experiment/record.h"
#include "agent/experiment/report.h"
#include "agent/experiment/switchback.h"
#include "common/log.h"
#include "google/protobuf/util/time_util.h"
#include "policy/decide.h"
#include "policy/experiment_sequential.h"

namespace locus {
namespace {

using experiment::Arm;
using google::protobuf::util::TimeUtil;

// The strata are the homes placement gives (what the design controls):
// where an unpinned worker runs at the draw is the scheduler's choice of
// the moment, and a stratum drawn from it can hold one arm only. Worked
// out at most once a tick, and only when asked (a worker joins).
class PlacementHomes {
 public:
  PlacementHomes(const Snapshot& snapshot, const PolicyState& policy,
                 const History& history)
      : snapshot_(snapshot), policy_(policy), history_(history) {}

  std::optional<int> Of(int32_t pid) {
    if (policy_.policy == nullptr) return std::nullopt;
    if (!homes_) homes_ = HomesOf(snapshot_, *policy_.policy, history_);
    auto it = homes_->find(pid);
    if (it == homes_->end()) return std::nullopt;
    return it->second;
  }

 private:
  const Snapshot& snapshot_;
  const PolicyState& policy_;
  const History& history_;
  std::optional<absl::flat_hash_map<int32_t, int>> homes_;
};

}  // namespace

ArmsThisTick ExperimentRunner::OnTick(const Snapshot& snapshot, Mode mode,
                                      const PolicyState& policy,
                                      const History& history) {
  absl::MutexLock lock(&mu_);
  ++ticks_;
  workers_seen_ = CountWorkers(snapshot);
  if (pending_.has_value() && run_ == nullptr) {
    Pending pending = std::move(*pending_);
    pending_.reset();
    Begin(snapshot, pending, policy, history);
  }
  if (run_ != nullptr) {
    if (mode == v1::Policy::MODE_DRY_RUN) {
      End(v1::EXPERIMENT_STATE_ABORTED,
          "the agent was switched to dry run: no arm is treated any more");
    } else if (run_->stop_requested) {
      End(v1::EXPERIMENT_STATE_STOPPED, run_->stop_reason);
    }
  }
  if (run_ != nullptr) {
    run_->now_ns = snapshot.now_ns;
    if (policy.version != run_->policy_version) {
      run_->notes.push_back(absl::StrCat("policy reloaded (version ",
                                         policy.version, ") after interval ",
                                         run_->intervals));
      run_->policy_version = policy.version;
    }
    PlacementHomes homes(snapshot, policy, history);
    if (std::vector<int32_t> joined = TrackUnits(
            *run_, snapshot, [&homes](int32_t pid) { return homes.Of(pid); });
        !joined.empty()) {
      if (run_->switchback) JoinSwitchback(*run_);
      Join(joined);
    }
    if (!run_->in_pre) CountTick(*run_, snapshot);
    if (snapshot.now_ns >= run_->next_ns) Measure(snapshot);
    if (run_ != nullptr && run_->in_pre && snapshot.now_ns >= run_->pre_end_ns)
      EndPre(snapshot);
  }
  if (run_ != nullptr && snapshot.now_ns >= run_->end_ns) {
    // The end's estimate is the final one, with the fixed interval, even
    // when the clock reached the end before the last planned interval (a
    // switchback's is made as each block ends).
    if (!run_->switchback) Estimate(/*live=*/false);
    End(v1::EXPERIMENT_STATE_DONE, "ran its whole duration");
  }
  ArmsThisTick arms;
  if (run_ != nullptr) {
    arms.untreated = Untreated(*run_);
    arms.release = std::move(run_->release);
    run_->release.clear();
    arms.levers = run_->levers;
    if (run_->switchback) SwitchbackArms(*run_, arms);
    arms.report = std::make_shared<const v1::ExperimentReport>(Report(false));
  } else if (ended_ != nullptr) {
    arms = std::move(ending_);
    arms.report = std::move(ended_);
    ending_ = ArmsThisTick{};
    ended_ = nullptr;
  }
  return arms;
}

void ExperimentRunner::OnConnections(const std::vector<SteeringState>& groups) {
  absl::MutexLock lock(&mu_);
  // A switchback's arms are blocks of time: its figures are the whole
  // host's, whichever node a connection came in on.
  if (run_ == nullptr || run_->switchback || run_->in_pre) return;
  for (const SteeringState& group : groups) {
    if (!group.steered) continue;
    for (const auto& [node, n] : group.tick) {
      std::array<uint64_t, 2>& counts = run_->sources[node];
      counts[0] += n.control;
      counts[1] += n.local + n.spilled + n.fallback + n.migrated;
    }
  }
}

void ExperimentRunner::Join(const std::vector<int32_t>& joined) {
  WriteRecord(Report(true));
  if (absl::Status watched = counter_->Watch(ActivePids(*run_, {}));
      !watched.ok())
    run_->notes.push_back("counting new workers: " + watched.ToString());
  const absl::flat_hash_set<int32_t> untreated = Untreated(*run_);
  for (int32_t pid : joined) {
    if (untreated.contains(pid) || !run_->levers.threads)
      run_->release.push_back(pid);
  }
}

void ExperimentRunner::Begin(const Snapshot& snapshot, const Pending& pending,
                             const PolicyState& policy,
                             const History& history) {
  std::vector<Unit> units = WorkersOf(snapshot);
  PlacementHomes homes(snapshot, policy, history);
  for (Unit& unit : units) {
    if (std::optional<int> home = homes.Of(unit.pid)) unit.node = *home;
  }
  const int64_t now = wall_ns_();
  const std::string id = absl::StrCat(
      "exp-", absl::FormatTime("%Y%m%d-%H%M%S", absl::FromUnixNanos(now),
                               absl::UTCTimeZone()));
  const bool switchback = pending.request.design() == kSwitchback;
  if (units.size() < LeastWorkers(switchback)) {
    AbortTooFew(id, units.size());
    return;
  }
  std::vector<experiment::UnitInfo> infos;
  for (const Unit& unit : units)
    infos.push_back({unit.pid, unit.node, unit.instance});
  const std::vector<Arm> arms = experiment::AssignArms(infos, pending.seed);
  for (size_t i = 0; i < units.size(); ++i) units[i].arm = arms[i];
  run_ = NewRun(std::move(units), snapshot, pending, policy, id, now);
  if (switchback) {
    const uint64_t block_ns = static_cast<uint64_t>(
        TimeUtil::DurationToNanoseconds(pending.request.block()));
    const uint32_t per_block =
        static_cast<uint32_t>(block_ns / run_->interval_ns);
    BeginSwitchback(*run_, run_->planned / (2 * per_block), per_block);
  }
  // The arms on disk before any worker is put back.
  WriteRecord(Report(true));
  if (absl::Status watched = counter_->Watch(ActivePids(*run_, {}));
      !watched.ok()) {
    End(v1::EXPERIMENT_STATE_ABORTED,
        "cannot count the workers' work: " + watched.ToString());
    return;
  }
  TakeBaselines();
  for (int32_t pid : Untreated(*run_)) run_->release.push_back(pid);
  // Without the threads lever the treated arm loses Locus's pins as well:
  // the levers under test act on workers the kernel places.
  if (!run_->levers.threads) {
    for (int32_t pid : ActivePids(*run_, Arm::kTreated))
      run_->release.push_back(pid);
  }
  LogStart();
}

std::unique_ptr<RunningExperiment> ExperimentRunner::NewRun(
    std::vector<Unit> units, const Snapshot& snapshot, const Pending& pending,
    const PolicyState& policy, const std::string& id, int64_t now) const {
  auto run = std::make_unique<RunningExperiment>();
  run->units = std::move(units);
  run->seed = pending.seed;
  run->interval_ns = static_cast<uint64_t>(
      TimeUtil::DurationToNanoseconds(pending.request.interval()));
  const uint64_t duration_ns = static_cast<uint64_t>(
      TimeUtil::DurationToNanoseconds(pending.request.duration()));
  const uint64_t pre_ns = static_cast<uint64_t>(std::max<int64_t>(
      0, TimeUtil::DurationToNanoseconds(pending.request.pre())));
  run->start_ns = snapshot.now_ns;
  run->next_ns = snapshot.now_ns + run->interval_ns;
  run->in_pre = pre_ns > 0;
  run->pre_end_ns = snapshot.now_ns + pre_ns;
  run->end_ns = snapshot.now_ns + pre_ns + duration_ns;
  run->planned = static_cast<uint32_t>(duration_ns / run->interval_ns);
  run->burn_in = pending.request.burn_in();  // Start set its default
  // Start refused a plan without two intervals after the burn-in.
  const int counted_planned =
      static_cast<int>(run->planned - std::min(run->planned, run->burn_in));
  run->harm_looks = experiment::PlannedHarmLooks(
      counted_planned, static_cast<int>(options_.guardrail_first_look),
      options_.guardrail_alpha);
  run->latency_looks = experiment::PlannedHarmLooks(
      counted_planned, static_cast<int>(options_.guardrail_first_look),
      options_.guardrail_alpha / 2);
  run->latency_margin = pending.request.latency_margin();  // Start set it
  // Start checked them.
  run->levers = ParseLevers({pending.request.levers().begin(),
                             pending.request.levers().end()},
                            pending.request.design() == kSwitchback)
                    .value_or(Levers{});
  run->policy_version = policy.version;
  run->work_source = counter_->source();
  run->service_source = counter_->service_source();
  run->pmu = PmuAvailability();
  run->clock = EmulatedClockNote(HypervisorVendor(HostCpuid));
  run->now_ns = snapshot.now_ns;
  v1::ExperimentReport& header = run->header;
  header.set_id(id);
  header.set_state(v1::EXPERIMENT_STATE_RUNNING);
  header.set_aa(pending.request.aa());
  header.set_seed(pending.seed);
  *header.mutable_started() = TimeUtil::NanosecondsToTimestamp(now);
  *header.mutable_duration() = pending.request.duration();
  *header.mutable_interval() = pending.request.interval();
  *header.mutable_levers() = pending.request.levers();
  header.set_design(pending.request.design());
  *header.mutable_block() = pending.request.block();
  header.set_reason(pending.request.reason());
  header.set_host(options_.host);
  *header.mutable_pre() = pending.request.pre();
  header.set_min_effect(pending.request.min_effect());
  header.set_planned_detectable(pending.planned_detectable);
  return run;
}

// Baselines: the first interval counts from here.
void ExperimentRunner::TakeBaselines() {
  absl::StatusOr<absl::flat_hash_map<int32_t, WorkSample>> first =
      counter_->Read();
  run_->counted_at_unix_ns = wall_ns_();
  if (!first.ok()) return;
  for (Unit& unit : run_->units) {
    auto it = first->find(unit.pid);
    if (it == first->end()) continue;
    unit.last = it->second;
    unit.baseline = true;
  }
}

void ExperimentRunner::Measure(const Snapshot& snapshot) {
  // Intervals missed (a stalled tick) are measured as one longer interval.
  while (run_->next_ns <= snapshot.now_ns) run_->next_ns += run_->interval_ns;
  absl::StatusOr<absl::flat_hash_map<int32_t, WorkSample>> samples =
      counter_->Read();
  if (!samples.ok()) {
    run_->notes.push_back(
        absl::StrCat("interval after ", run_->intervals,
                     " not read: ", samples.status().ToString()));
    return;
  }
  if (run_->in_pre) {
    AddPreInterval(*run_, *samples);
    WriteRecord(Report(true));
    return;
  }
  if (run_->switchback) {
    BeforeBlockInterval(*run_);
    AddInterval(*run_, *samples, wall_ns_());
    AfterBlockInterval(*run_);
  } else {
    AddInterval(*run_, *samples, wall_ns_());
    Assess();
  }
  if (run_ != nullptr) WriteRecord(Report(true));
}

// The pre-period is over: the treated arm is treated from now, its first
// intervals the burn-in; the planned intervals start.
void ExperimentRunner::EndPre(const Snapshot& snapshot) {
  run_->in_pre = false;
  run_->next_ns = snapshot.now_ns + run_->interval_ns;
  // The planned intervals start now: the end stays on their grid.
  run_->end_ns = snapshot.now_ns + uint64_t{run_->planned} * run_->interval_ns;
  run_->notes.push_back(
      absl::StrCat("pre-period over after ", run_->pre_intervals,
                   " intervals: the treated arm is treated from now"));
  // Counting starts here: the reads now are the first planned interval's
  // baselines.
  TakeBaselines();
}

experiment::RatioEstimate ExperimentRunner::Estimate(bool live) {
  // CUPED when there was a pre-period.
  const bool cuped = run_->pre_intervals > 0;
  const std::vector<experiment::UnitTotals> work_totals = Totals(*run_, false);
  const experiment::RatioEstimate work =
      experiment::EstimateTotals(work_totals, 0.95, cuped);
  run_->work = EstimateProto(work, "bytes_per_cpu_second", live);
  run_->work_per_worker = EstimateProto(experiment::EstimateRatio(work_totals),
                                        "bytes_per_cpu_second", live);
  run_->connections = EstimateProto(
      experiment::EstimateTotals(Totals(*run_, true), 0.95, cuped),
      "connections_per_cpu_second", live);
  EstimateLatency(*run_, live);
  return work;
}

void ExperimentRunner::Assess() {
  // Intervals counted after the burn-in, and whether this is before the
  // planned end (as the report's readers tell it: fewer intervals than
  // planned): before it every interval shown is the one valid at any look.
  const uint32_t counted =
      run_->intervals > run_->burn_in ? run_->intervals - run_->burn_in : 0;
  const bool live = run_->intervals < run_->planned;
  const experiment::RatioEstimate work = Estimate(live);
  if (live && run_->conclusive_at == 0 && run_->work.significant())
    run_->conclusive_at = run_->intervals;
  if (counted < options_.guardrail_first_look || run_->harm_looks.empty())
    return;
  const int look_at = std::min<int>(counted, run_->harm_looks.back().interval);
  std::string why;
  if (work.valid) {
    const double bound = experiment::HarmBoundAt(run_->harm_looks, look_at);
    const experiment::GuardrailLook look =
        experiment::LookForHarm(work.log_ratio, work.se, work.df, bound);
    run_->guardrail_p = look.p;
    run_->guardrail_bound = look.bound;
    run_->guardrail_z = bound;
    if (look.stop) {
      run_->guardrail = "efficiency";
      why = absl::StrFormat(
          "the guardrail stopped it after interval %d: treated/control %.3f, "
          "one-sided p %.2g below its bound %.2g (z %.2f)",
          run_->intervals, work.ratio, look.p, look.bound, bound);
    }
  }
  if (why.empty()) {
    const std::string crossed = LookForLatencyHarm(
        *run_, experiment::HarmBoundAt(run_->latency_looks, look_at));
    if (crossed.empty()) return;
    run_->guardrail = "latency";
    why = absl::StrCat("the latency guardrail stopped it after interval ",
                       run_->intervals, ": ", crossed);
  }
  absl::StrAppend(&why, run_->header.aa()
                            ? " (A/A: a false alarm, nothing was treated)"
                            : "; the treated workers were put back and the "
                              "agent switched to dry run");
  if (!run_->header.aa()) {
    ending_.release = ActivePids(*run_, Arm::kTreated);
    for (int32_t pid : ActivePids(*run_, std::nullopt))
      ending_.untreated.insert(pid);
  }
  End(v1::EXPERIMENT_STATE_GUARDRAIL, why);
  if (!last_->aa() && on_harm_) on_harm_(why);
}

v1::ExperimentReport ExperimentRunner::Report(bool whole) const {
  v1::ExperimentReport report = BuildReport(*run_, whole);
  const uint64_t left =
      run_->end_ns > run_->now_ns ? run_->end_ns - run_->now_ns : 0;
  *report.mutable_remaining() =
      TimeUtil::NanosecondsToDuration(static_cast<int64_t>(left));
  return report;
}

}  // namespace locus
