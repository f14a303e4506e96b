#include "agent/experiment/report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace locus {
namespace {

// "+3.1 %" of a ratio.
std::string Percent(double ratio) {
  return absl::StrFormat("%+.1f %%", (ratio - 1) * 100);
}

// "[+1.2, +5.0] %" of a ratio's interval.
std::string Bounds(const v1::ExperimentEstimate& e) {
  return absl::StrFormat("[%+.1f, %+.1f] %%", (e.low() - 1) * 100,
                         (e.high() - 1) * 100);
}

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
    "the unit is the worker (the unit of randomisation): each worker's log "
    "work per CPU-second over all its intervals, arms compared within each "
    "node (stratum) and weighted by its workers, with a pooled variance and "
    "Student's t; as one measurement per worker, the correlation between a "
    "worker's intervals cannot narrow the interval";

v1::ExperimentEstimate EstimateProto(const experiment::Estimate& estimate,
                                     const std::string& metric) {
  v1::ExperimentEstimate out;
  out.set_metric(metric);
  out.set_valid(estimate.valid);
  out.set_why_not(estimate.why_not);
  out.set_ratio(estimate.ratio);
  out.set_low(estimate.low);
  out.set_high(estimate.high);
  out.set_significant(estimate.significant());
  out.set_detectable(estimate.detectable);
  out.set_df(estimate.df);
  return out;
}

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
  *report.mutable_connections() = run.connections;
  report.set_method(kExperimentMethod);
  report.set_work_source(run.work_source);
  report.set_pmu(run.pmu);
  report.set_guardrail_p(run.guardrail_p);
  report.set_guardrail_bound(run.guardrail_bound);
  for (const std::string& note : run.notes) report.add_notes(note);
  AddUnits(run, whole, report);
  if (whole) {
    for (const v1::ExperimentInterval& i : run.series) *report.add_series() = i;
  } else if (!run.series.empty()) {
    *report.add_series() = run.series.back();
  }
  report.set_verdict(Verdict(report));
  return report;
}

std::string Verdict(const v1::ExperimentReport& report) {
  const v1::ExperimentEstimate& work = report.work();
  const std::string units =
      absl::StrCat(report.treated() + report.control(), " workers over ",
                   report.intervals(), " intervals");
  if (!work.valid()) {
    return absl::StrCat("no estimate yet: ", work.why_not().empty()
                                                 ? "no interval measured"
                                                 : work.why_not());
  }
  if (report.aa()) {
    return absl::StrFormat(
        "A/A: %s %s, interval width %.1f %%: this host resolves about "
        "±%.1f %% with %s%s",
        Percent(work.ratio()), Bounds(work), (work.high() - work.low()) * 100,
        work.detectable() * 100, units,
        work.significant() ? " (the interval excludes 0: expected in 5 % "
                             "of A/A runs)"
                           : "");
  }
  if (work.significant()) {
    return absl::StrCat("Locus: ", Percent(work.ratio()),
                        " work per CPU-second ", Bounds(work), ", significant",
                        work.ratio() < 1 ? ": harmful here" : "", " (", units,
                        ")");
  }
  return absl::StrFormat(
      "no significant difference: %s %s (could detect ±%.1f %% with %s)",
      Percent(work.ratio()), Bounds(work), work.detectable() * 100, units);
}

}  // namespace locus
