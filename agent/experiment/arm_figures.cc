#include "agent/experiment/arm_figures.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/experiment/report.h"
#include "policy/experiment_latency.h"
#include "policy/experiment_ratio.h"
#include "policy/experiment_sequential.h"

namespace locus {
namespace {

using experiment::Arm;

double PerOrZero(double value, double per) { return per > 0 ? value / per : 0; }

}  // namespace

ArmSums SumArm(const RunningExperiment& run, std::optional<Arm> arm) {
  ArmSums sums;
  for (const Unit& unit : run.units) {
    if ((arm.has_value() && unit.arm != *arm) || unit.intervals == 0) continue;
    sums.bytes += static_cast<double>(unit.bytes);
    sums.cpu_ns += static_cast<double>(unit.cpu_ns);
    sums.wait_ns += static_cast<double>(unit.wait_ns);
    sums.voluntary += static_cast<double>(unit.voluntary_switches);
    sums.involuntary += static_cast<double>(unit.involuntary_switches);
    sums.requests += unit.requests;
    sums.accepted += unit.accepted;
    experiment::AddCounts(sums.service_us, unit.service_us);
  }
  return sums;
}

void AddSums(ArmSums& into, const ArmSums& add) {
  into.bytes += add.bytes;
  into.cpu_ns += add.cpu_ns;
  into.wait_ns += add.wait_ns;
  into.voluntary += add.voluntary;
  into.involuntary += add.involuntary;
  into.requests += add.requests;
  into.accepted += add.accepted;
  experiment::AddCounts(into.service_us, add.service_us);
}

ArmSums Since(const ArmSums& now, const ArmSums& then) {
  ArmSums d = now;
  d.bytes -= then.bytes;
  d.cpu_ns -= then.cpu_ns;
  d.wait_ns -= then.wait_ns;
  d.voluntary -= then.voluntary;
  d.involuntary -= then.involuntary;
  d.requests -= std::min(d.requests, then.requests);
  d.accepted -= std::min(d.accepted, then.accepted);
  for (size_t i = 0; i < d.service_us.size() && i < then.service_us.size(); ++i)
    d.service_us[i] -= std::min(d.service_us[i], then.service_us[i]);
  return d;
}

v1::ExperimentArmFigures Figures(const ArmSums& sums) {
  v1::ExperimentArmFigures out;
  const double requests = static_cast<double>(sums.requests);
  out.set_requests(sums.requests);
  out.set_p50_us(experiment::Quantile(sums.service_us, 0.5).value_or(0));
  out.set_p99_us(experiment::Quantile(sums.service_us, 0.99).value_or(0));
  out.set_wait_per_cpu_second(PerOrZero(sums.wait_ns, sums.cpu_ns));
  out.set_wait_us_per_request(PerOrZero(sums.wait_ns / 1e3, requests));
  out.set_voluntary_switches_per_request(PerOrZero(sums.voluntary, requests));
  out.set_involuntary_switches_per_request(
      PerOrZero(sums.involuntary, requests));
  out.set_bytes_per_request(PerOrZero(sums.bytes, requests));
  out.set_connections(sums.accepted);
  out.set_bytes_per_connection(
      PerOrZero(sums.bytes, static_cast<double>(sums.accepted)));
  return out;
}

namespace {

// What a bootstrap quantile ratio is as an estimate.
v1::ExperimentEstimate QuantileProto(const experiment::QuantileRatio& q,
                                     const std::string& metric) {
  v1::ExperimentEstimate out;
  out.set_metric(metric);
  out.set_estimator("pooled quantile, bootstrap over workers");
  out.set_valid(q.valid);
  out.set_why_not(q.why_not);
  out.set_ratio(q.ratio);
  out.set_low(q.low);
  out.set_high(q.high);
  out.set_significant(q.valid && (q.low > 1 || q.high < 1));
  out.set_df(q.df);
  out.set_log_ratio(q.valid ? std::log(q.ratio) : 0);
  out.set_se(q.se_log);
  return out;
}

// A latency metric's look: harm when log(ratio) is above log(1 + margin).
experiment::GuardrailLook Look(const v1::ExperimentEstimate& e, double margin,
                               double bound_z) {
  if (!e.valid() || e.se() <= 0) return {};
  return experiment::LookForHarm(std::log1p(margin) - e.log_ratio(), e.se(),
                                 e.df(), bound_z);
}

// "node 0 1234 (62 %), node 1 756 (38 %)" for one arm; node -1 is a CPU
// of no known node.
std::string ArmSources(const std::map<int, std::array<uint64_t, 2>>& sources,
                       int arm) {
  uint64_t all = 0;
  for (const auto& [node, counts] : sources) all += counts[arm];
  if (all == 0) return "none";
  std::string out;
  for (const auto& [node, counts] : sources) {
    absl::StrAppend(&out, out.empty() ? "" : ", ",
                    node < 0 ? "no known node" : absl::StrCat("node ", node),
                    absl::StrFormat(" %d (%.0f %%)", counts[arm],
                                    100.0 * counts[arm] / all));
  }
  return out;
}

}  // namespace

std::string SourcesNote(const RunningExperiment& run) {
  const std::string what =
      "new connections by the node that received them, since the treatment "
      "began: ";
  if (run.sources.empty()) {
    return what +
           "not counted (connection steering steered no group: without the "
           "connections lever, or no shared listening socket)";
  }
  return absl::StrCat(what, "treated ", ArmSources(run.sources, 1),
                      "; control ", ArmSources(run.sources, 0));
}

void CountTick(RunningExperiment& run, const Snapshot& snapshot) {
  CountWidened(run, snapshot);
  const double tick = static_cast<double>(snapshot.tick_ns);
  for (const CpuSample& cpu : snapshot.cpus) {
    if (cpu.busy_all < 0) continue;
    run.host_busy_ns += cpu.busy_all * tick;
    run.host_capacity_ns += tick;
  }
}

void EstimateLatency(RunningExperiment& run, bool live) {
  std::vector<experiment::WorkerLatency> workers;
  std::vector<experiment::UnitTotals> waits;
  for (const Unit& unit : run.units) {
    if (unit.intervals == 0) continue;
    workers.push_back({unit.arm, unit.service_us});
    experiment::UnitTotals totals;
    totals.stratum = unit.node;
    totals.arm = unit.arm;
    totals.work = static_cast<double>(unit.wait_ns) / 1e9;
    totals.cpu_seconds = static_cast<double>(unit.cpu_ns) / 1e9;
    totals.intervals = static_cast<int>(unit.intervals);
    waits.push_back(totals);
  }
  run.treated_figures = Figures(SumArm(run, Arm::kTreated));
  run.control_figures = Figures(SumArm(run, Arm::kControl));
  const experiment::LatencyEstimate latency =
      experiment::EstimateLatency(workers, run.seed);
  run.service_p50 = QuantileProto(latency.p50, "p50_service_time");
  run.service_p99 = QuantileProto(latency.p99, "p99_service_time");
  run.run_queue_wait = EstimateProto(experiment::EstimateTotals(waits),
                                     "run_queue_wait_per_cpu_second", live);
}

void AddArmFigures(const RunningExperiment& run, v1::ExperimentReport& report) {
  *report.mutable_treated_figures() = run.treated_figures;
  *report.mutable_control_figures() = run.control_figures;
  *report.mutable_service_p50() = run.service_p50;
  *report.mutable_service_p99() = run.service_p99;
  *report.mutable_run_queue_wait() = run.run_queue_wait;
  report.set_host_bytes_per_second(
      run.host_wall_ns > 0 ? static_cast<double>(run.host_bytes) /
                                 (static_cast<double>(run.host_wall_ns) / 1e9)
                           : 0);
  report.set_host_cpu_busy(
      run.host_capacity_ns > 0 ? run.host_busy_ns / run.host_capacity_ns : -1);
  // Per request where both arms' are seen, else per connection accepted.
  const v1::ExperimentArmFigures& t = report.treated_figures();
  const v1::ExperimentArmFigures& c = report.control_figures();
  const bool per_request = t.requests() > 0 && c.requests() > 0;
  const double tb =
      per_request ? t.bytes_per_request() : t.bytes_per_connection();
  const double cb =
      per_request ? c.bytes_per_request() : c.bytes_per_connection();
  report.set_traffic_differs(tb > 0 && cb > 0 &&
                             std::abs(tb / cb - 1) > kTrafficDiffers);
  report.set_latency_margin(run.latency_margin);
  report.set_latency_guardrail_p(run.latency_guardrail_p);
  report.set_guardrail(run.guardrail);
}

std::string LookForLatencyHarm(RunningExperiment& run, double bound_z) {
  const experiment::GuardrailLook p99 =
      Look(run.service_p99, run.latency_margin, bound_z);
  const experiment::GuardrailLook wait =
      Look(run.run_queue_wait, run.latency_margin, bound_z);
  run.latency_guardrail_p = std::min(p99.p, wait.p);
  if (!p99.stop && !wait.stop) return "";
  const bool on_p99 = p99.stop && (!wait.stop || p99.p <= wait.p);
  const v1::ExperimentEstimate& e =
      on_p99 ? run.service_p99 : run.run_queue_wait;
  const experiment::GuardrailLook& look = on_p99 ? p99 : wait;
  return absl::StrFormat(
      "%s treated/control %.3f, above %.2f (the margin) with one-sided p %.2g "
      "below its bound %.2g",
      on_p99 ? "p99 service time" : "run-queue wait per CPU-second", e.ratio(),
      1 + run.latency_margin, look.p, look.bound);
}

}  // namespace locus
