#include "agent/experiment/report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/experiment/arm_figures.h"
#include "agent/experiment/switchback.h"
#include "policy/experiment_sequential.h"

namespace locus {

std::string PercentChange(double ratio) {
  return absl::StrFormat("%+.1f %%", (ratio - 1) * 100);
}

std::string PercentBounds(const v1::ExperimentEstimate& e) {
  return absl::StrFormat("[%+.1f, %+.1f] %%", (e.low() - 1) * 100,
                         (e.high() - 1) * 100);
}

namespace {

v1::ExperimentArm ArmProto(experiment::Arm arm) {
  return arm == experiment::Arm::kTreated ? v1::EXPERIMENT_ARM_TREATED
                                          : v1::EXPERIMENT_ARM_CONTROL;
}

// Each unit's share of the units' accepted connections, against the share
// of their intervals it was there for; 0 when nothing was counted.
double ShareOf(const Unit& unit, uint64_t accepted, uint64_t unit_intervals) {
  if (accepted == 0 || unit_intervals == 0 || unit.intervals == 0) return 0;
  return static_cast<double>(unit.accepted) / accepted;
}

// Connection shares and the largest skew from a fair share; with `whole`,
// every unit too.
void AddUnits(const RunningExperiment& run, bool whole,
              v1::ExperimentReport& report) {
  uint64_t accepted = 0, unit_intervals = 0;
  for (const Unit& unit : run.units) {
    accepted += unit.accepted;
    unit_intervals += unit.intervals;
  }
  double skew = 0;
  for (const Unit& unit : run.units) {
    const double share = ShareOf(unit, accepted, unit_intervals);
    if (share > 0 || unit.intervals > 0) {
      // A unit present for part of the run is owed that part of a share.
      const double fair =
          unit_intervals ? static_cast<double>(unit.intervals) / unit_intervals
                         : 0;
      if (fair > 0 && accepted > 0)
        skew = std::max(skew, std::abs(share / fair - 1));
    }
    if (!whole) continue;
    v1::ExperimentUnit* out = report.add_units();
    out->set_pid(unit.pid);
    out->set_comm(unit.comm);
    out->set_arm(ArmProto(unit.arm));
    out->set_stratum_node(unit.node);
    out->set_instance(unit.instance);
    out->set_active(unit.active);
    out->set_intervals(unit.intervals);
    out->set_lost_at_interval(unit.active ? 0 : unit.lost_at);
    out->set_bytes_sent(unit.bytes);
    out->set_accepted(unit.accepted);
    out->set_cpu_seconds(static_cast<double>(unit.cpu_ns) / 1e9);
    if (unit.cpu_ns > 0) {
      out->set_bytes_per_cpu_second(static_cast<double>(unit.bytes) /
                                    (static_cast<double>(unit.cpu_ns) / 1e9));
    }
    if (unit.logs > 1)
      out->set_interval_sd(std::sqrt(unit.log_m2 / (unit.logs - 1)));
    out->set_connection_share(share);
  }
  report.set_connection_skew(skew);
  report.set_connections_fair(accepted > 0 && skew <= kFairShare);
}

}  // namespace

const char kExperimentMethod[] =
    "primary: the ratio of totals, each arm's total work over its total CPU "
    "time within each (instance, node) stratum, strata weighted by their "
    "share of CPU time; a worker with CPU time but no work counts. Its "
    "standard error is clustered on the worker (delta method, bias-reduced, "
    "Satterthwaite df). Before the planned end the interval shown is a 95 % "
    "confidence sequence (normal mixture, mixing SD 0.05 on the log ratio), "
    "valid however often it is read: the verdict is not conclusive until it "
    "excludes 0; at the planned end the fixed 95 % interval is the answer. "
    "The guardrail is one-sided at 1 % with exact Lan-DeMets "
    "O'Brien-Fleming boundaries. Secondary: the equal-weight estimate, each "
    "worker's log work per CPU-second counted alike";

namespace {

// The confidence sequence into `out`, and, when `live`, as its interval.
void ReadLive(v1::ExperimentEstimate& out, bool live) {
  if (!out.valid()) return;
  const experiment::Sequence seq =
      experiment::ConfidenceSequence(out.log_ratio(), out.se(), out.df());
  out.set_sequence_low(seq.low);
  out.set_sequence_high(seq.high);
  if (!live) return;
  out.set_low(seq.low);
  out.set_high(seq.high);
  out.set_significant(seq.excludes_one());
}

}  // namespace

namespace {

// What the two estimators' results have alike, their log ratio and its
// standard error included.
template <typename E>
v1::ExperimentEstimate CommonProto(const E& estimate, const std::string& metric,
                                   const char* estimator, double log_ratio,
                                   double se) {
  v1::ExperimentEstimate out;
  out.set_metric(metric);
  out.set_estimator(estimator);
  out.set_valid(estimate.valid);
  out.set_why_not(estimate.why_not);
  out.set_ratio(estimate.ratio);
  out.set_low(estimate.low);
  out.set_high(estimate.high);
  out.set_significant(estimate.significant());
  out.set_detectable(estimate.detectable);
  out.set_df(estimate.df);
  out.set_log_ratio(log_ratio);
  out.set_se(se);
  return out;
}

}  // namespace

v1::ExperimentEstimate EstimateProto(const experiment::RatioEstimate& estimate,
                                     const std::string& metric, bool live) {
  v1::ExperimentEstimate out = CommonProto(estimate, metric, "ratio of totals",
                                           estimate.log_ratio, estimate.se);
  out.set_adjusted(estimate.adjusted);
  out.set_variance_reduction(estimate.variance_reduction);
  ReadLive(out, live);
  return out;
}

v1::ExperimentEstimate EstimateProto(const experiment::Estimate& estimate,
                                     const std::string& metric, bool live) {
  v1::ExperimentEstimate out =
      CommonProto(estimate, metric, "equal-weight", std::log(estimate.ratio),
                  estimate.se_log);
  ReadLive(out, live);
  return out;
}

namespace {

// Per (instance, node) and arm, the sums a fleet pools.
void AddCells(const RunningExperiment& run, v1::ExperimentReport& report) {
  std::map<std::tuple<int32_t, int, int>, v1::ExperimentCell> cells;
  for (const Unit& unit : run.units) {
    if (unit.intervals == 0) continue;
    v1::ExperimentCell& cell =
        cells[{unit.instance, unit.node, static_cast<int>(unit.arm)}];
    const double work = static_cast<double>(unit.bytes);
    const double cpu = static_cast<double>(unit.cpu_ns) / 1e9;
    cell.set_instance(unit.instance);
    cell.set_node(unit.node);
    cell.set_arm(ArmProto(unit.arm));
    cell.set_n(cell.n() + 1);
    cell.set_work(cell.work() + work);
    cell.set_cpu_seconds(cell.cpu_seconds() + cpu);
    cell.set_work_squares(cell.work_squares() + work * work);
    cell.set_cpu_squares(cell.cpu_squares() + cpu * cpu);
    cell.set_work_cpu(cell.work_cpu() + work * cpu);
  }
  for (auto& [key, cell] : cells) {
    if (cell.work() > 0 && cell.cpu_seconds() > 0)
      cell.set_log_ratio(std::log(cell.work() / cell.cpu_seconds()));
    *report.add_cells() = std::move(cell);
  }
}

}  // namespace

v1::ExperimentReport BuildReport(const RunningExperiment& run, bool whole) {
  v1::ExperimentReport report = run.header;
  report.set_intervals(run.intervals);
  size_t treated = 0;
  for (const Unit& unit : run.units) {
    if (unit.active && unit.arm == experiment::Arm::kTreated) ++treated;
  }
  report.set_treated(static_cast<uint32_t>(treated));
  report.set_control(
      static_cast<uint32_t>(ActivePids(run, std::nullopt).size() - treated));
  *report.mutable_work() = run.work;
  *report.mutable_work_per_worker() = run.work_per_worker;
  *report.mutable_connections() = run.connections;
  report.set_planned(run.planned);
  report.set_pre_intervals(run.pre_intervals);
  report.set_burn_in(run.burn_in);
  report.set_burned_intervals(run.burned);
  report.set_treated_confined_ticks(run.confined_ticks);
  report.set_treated_widened_ticks(run.widened_ticks);
  report.set_conclusive_at(run.conclusive_at);
  report.set_guardrail_z(run.guardrail_z);
  report.set_method(kExperimentMethod);
  report.set_work_source(run.work_source);
  report.set_pmu(run.pmu);
  report.set_clock(run.clock);
  report.set_guardrail_p(run.guardrail_p);
  report.set_guardrail_bound(run.guardrail_bound);
  for (const std::string& note : run.notes) report.add_notes(note);
  if (!run.switchback && run.intervals > 0) report.add_notes(SourcesNote(run));
  AddUnits(run, whole, report);
  AddArmFigures(run, report);
  report.set_service_source(run.service_source);
  // A switchback's blocks stand for the cells: its workers are in no arm.
  if (run.switchback) AddBlocks(run, report);
  if (whole && !run.switchback) AddCells(run, report);
  if (whole) {
    for (const v1::ExperimentInterval& i : run.series) *report.add_series() = i;
  } else if (!run.series.empty()) {
    *report.add_series() = run.series.back();
  }
  report.set_verdict(Verdict(report));
  return report;
}

namespace {

// Read before the planned end (an old record without a plan: at its end).
bool BeforeTheEnd(const v1::ExperimentReport& report) {
  return report.state() != v1::EXPERIMENT_STATE_DONE && report.planned() > 0 &&
         report.intervals() < report.planned();
}

// Before the planned end, without a crossing: what it shows so far.
std::string NotConclusive(const v1::ExperimentReport& report,
                          const std::string& units) {
  const v1::ExperimentEstimate& work = report.work();
  const std::string so_far = absl::StrCat(
      PercentChange(work.ratio()), " work per CPU-second so far ",
      PercentBounds(work), " (an interval valid at any look; ", units, ")");
  if (report.state() == v1::EXPERIMENT_STATE_RUNNING) {
    return absl::StrCat("running, not conclusive: ", so_far);
  }
  return absl::StrCat("inconclusive (stopped at ", report.intervals(), " of ",
                      report.planned(), " intervals): ", so_far);
}

}  // namespace

namespace {

// Stopped by the latency guardrail: what the treated requests waited, with
// the work per CPU-second that could not show it.
std::string LatencyHarm(const v1::ExperimentReport& report) {
  auto change = [](const v1::ExperimentEstimate& e) {
    return e.valid()
               ? absl::StrCat(PercentChange(e.ratio()), " ", PercentBounds(e))
               : std::string("n/a");
  };
  return absl::StrCat(
      "Locus: treated requests waited longer (p99 service time ",
      change(report.service_p99()), ", run-queue wait per CPU-second ",
      change(report.run_queue_wait()), ") at ",
      PercentChange(report.work().ratio()),
      " work per CPU-second: harmful here, the latency guardrail's boundary "
      "was crossed after interval ",
      report.intervals(), " of ", report.planned());
}

}  // namespace

std::string Verdict(const v1::ExperimentReport& report) {
  if (report.design() == kSwitchback) return SwitchbackVerdict(report);
  const v1::ExperimentEstimate& work = report.work();
  const std::string units =
      absl::StrCat(report.treated() + report.control(), " workers over ",
                   report.intervals(), " intervals");
  if (!work.valid()) {
    return absl::StrCat("no estimate yet: ", work.why_not().empty()
                                                 ? "no interval measured"
                                                 : work.why_not());
  }
  if (report.state() == v1::EXPERIMENT_STATE_GUARDRAIL &&
      report.guardrail() == "latency")
    return LatencyHarm(report);
  if (report.state() == v1::EXPERIMENT_STATE_GUARDRAIL) {
    return absl::StrCat("Locus: ", PercentChange(work.ratio()),
                        " work per CPU-second ", PercentBounds(work),
                        ": harmful here, the guardrail's boundary was crossed "
                        "after interval ",
                        report.intervals(), " of ", report.planned());
  }
  const bool early = BeforeTheEnd(report);
  if (early && report.conclusive_at() == 0) {
    return report.aa() ? absl::StrCat("A/A: ", NotConclusive(report, units))
                       : NotConclusive(report, units);
  }
  if (report.aa()) {
    return absl::StrFormat(
        "A/A: %s %s, interval width %.1f %%: this host resolves about "
        "±%.1f %% with %s%s",
        PercentChange(work.ratio()), PercentBounds(work),
        (work.high() - work.low()) * 100, work.detectable() * 100, units,
        work.significant() ? " (the interval excludes 0: expected in 5 % "
                             "of A/A runs)"
                           : "");
  }
  if (early || work.significant()) {
    return absl::StrCat(
        "Locus: ", PercentChange(work.ratio()), " work per CPU-second ",
        PercentBounds(work), ", significant",
        work.ratio() < 1 ? ": harmful here" : "", " (", units,
        early ? absl::StrCat("; conclusive at interval ",
                             report.conclusive_at(), " of ", report.planned(),
                             ": an interval valid at any look excludes 0")
              : "",
        ")");
  }
  return absl::StrFormat(
      "no significant difference: %s %s (could detect ±%.1f %% with %s)",
      PercentChange(work.ratio()), PercentBounds(work), work.detectable() * 100,
      units);
}

}  // namespace locus
