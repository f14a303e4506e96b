// The experiment's part of the exporter (locusctl experiment): whether
// one runs, its intervals and arms, both arms' work per CPU-second over its
// last interval (a switchback's: over its last on and off blocks), the running
// estimate with its 95 % bounds, the guardrail's last p, and how experiments
// ended. The series of a running experiment exist only while it runs: a stale
// estimate on a graph would read as a live one. Labels are fixed words (arm,
// metric, bound, state), never an experiment's id, but for the last ended
// experiment's result: one id per host at a time, kept until the next
// experiment starts, for a fleet's recording rules to pool
// (deploy/prometheus/locus-experiment-pool.yml).
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "agent/api/prometheus_exporter.h"
#include "agent/api/prometheus_labels.h"

namespace locus {
namespace {

constexpr v1::ExperimentState kEndStates[] = {
    v1::EXPERIMENT_STATE_DONE, v1::EXPERIMENT_STATE_STOPPED,
    v1::EXPERIMENT_STATE_GUARDRAIL, v1::EXPERIMENT_STATE_INTERRUPTED,
    v1::EXPERIMENT_STATE_ABORTED};

// The report's treated/control estimates by their `metric` label: work and
// connections per CPU-second, and what users feel. A switchback's compare
// the whole host on and off: labelled apart, so that a fleet's pooling
// never mixes them with the A/B design's.
std::vector<std::pair<const char*, const v1::ExperimentEstimate*>> Estimates(
    const v1::ExperimentReport& r) {
  if (r.design() == "switchback") {
    return {{"switchback_host_bytes_per_cpu_second", &r.work()},
            {"switchback_p99_service_time", &r.service_p99()},
            {"switchback_run_queue_wait_per_cpu_second", &r.run_queue_wait()}};
  }
  return {{"bytes_per_cpu_second", &r.work()},
          {"connections_per_cpu_second", &r.connections()},
          {"p50_service_time", &r.service_p50()},
          {"p99_service_time", &r.service_p99()},
          {"run_queue_wait_per_cpu_second", &r.run_queue_wait()}};
}

// Each arm's workers and work per CPU-second, [0] control and [1] treated.
// A switchback's workers are all in the arm of the block under way (the
// last listed), and each arm's work is its last block's that ran to its
// end; an A/B's are its arms' over its last interval.
struct ArmGauges {
  double units[2] = {0, 0};
  std::optional<double> work[2];
};
ArmGauges Arms(const v1::ExperimentReport& r) {
  ArmGauges out;
  if (r.design() != "switchback") {
    out.units[0] = r.control();
    out.units[1] = r.treated();
    if (!r.series().empty()) {
      const v1::ExperimentInterval& last = *r.series().rbegin();
      out.work[0] = last.control_bytes_per_cpu_second();
      out.work[1] = last.treated_bytes_per_cpu_second();
    }
    return out;
  }
  const bool on = !r.blocks().empty() && r.blocks().rbegin()->on();
  out.units[on ? 1 : 0] = r.treated() + r.control();
  for (int arm : {0, 1}) {
    auto block = std::find_if(r.blocks().rbegin(), r.blocks().rend(),
                              [arm](const v1::ExperimentBlock& b) {
                                return b.on() == (arm == 1) && b.complete();
                              });
    if (block != r.blocks().rend())
      out.work[arm] = block->bytes_per_cpu_second();
  }
  return out;
}

}  // namespace

void PrometheusExporter::RegisterExperiment() {
  experiment_running_ =
      NewGauge("locus_experiment_running",
               "1 while an A/B experiment runs (locusctl experiment start)");
  experiment_intervals_ =
      NewGauge("locus_experiment_intervals",
               "Intervals the running experiment has measured so far");
  experiment_units_ = NewGauge(
      "locus_experiment_units",
      "Workers in each arm of the running experiment (treated: the policy "
      "tunes them; control: left as the kernel placed them); in a "
      "switchback, all of them in the arm of the block under way (treated: "
      "an on block)");
  experiment_work_ = NewGauge(
      "locus_experiment_work_per_cpu_second",
      "Bytes sent per CPU-second by each arm's workers over the running "
      "experiment's last interval; in a switchback, the whole host's over "
      "the last on (treated) and off (control) block that ran to its end");
  experiment_estimate_ = NewGauge(
      "locus_experiment_estimate",
      "Treated/control ratio of the running experiment's metric "
      "(bound=ratio) and its 95 % confidence interval (bound=low, high); "
      "absent until it can be estimated");
  experiment_guardrail_p_ = NewGauge(
      "locus_experiment_guardrail_p",
      "One-sided p of harm at the guardrail's last look (the experiment "
      "stops early when it falls below the alpha-spending bound); absent "
      "before the first look");
  experiment_result_ = NewGauge(
      "locus_experiment_result",
      "The last ended experiment's estimate of treated/control (by id and "
      "metric): stat=log_ratio, se (its standard error, clustered on the "
      "worker), df, ratio, low, high (the interval its verdict used); kept "
      "until the next experiment starts, for pooling across hosts");
  experiments_ended_ = NewCounter(
      "locus_experiments_ended_total",
      "A/B experiments that ended, by how: done, stopped, guardrail (stopped "
      "early: Locus was significantly harmful), interrupted, aborted");
  experiment_running_->Add({}).Set(0);
  for (v1::ExperimentState state : kEndStates) {
    experiments_ended_->Add({{"state", ExperimentStateWord(state)}});
  }
}

void PrometheusExporter::ClearExperiment() {
  for (auto [family, gauge] : experiment_series_) family->Remove(gauge);
  experiment_series_.clear();
}

void PrometheusExporter::ClearResult() {
  for (prometheus::Gauge* gauge : experiment_result_series_)
    experiment_result_->Remove(gauge);
  experiment_result_series_.clear();
}

// The ended experiment's result replaces the last one's.
void PrometheusExporter::ExportResult(const v1::ExperimentReport& r) {
  ClearResult();
  for (const auto& [metric, e] : Estimates(r)) {
    if (!e->valid() || !(e->se() > 0)) continue;
    for (const auto& [stat, value] :
         {std::pair<const char*, double>{"log_ratio", e->log_ratio()},
          {"se", e->se()},
          {"df", e->df()},
          {"ratio", e->ratio()},
          {"low", e->low()},
          {"high", e->high()}}) {
      prometheus::Gauge& gauge = experiment_result_->Add(
          {{"id", r.id()}, {"metric", metric}, {"stat", stat}});
      gauge.Set(value);
      experiment_result_series_.push_back(&gauge);
    }
  }
}

void PrometheusExporter::CountEnded(const v1::ExperimentReport& r) {
  // The tick it ends carries its final state: counted once per experiment.
  if (r.state() == v1::EXPERIMENT_STATE_UNSPECIFIED ||
      r.id() == last_ended_experiment_) {
    return;
  }
  experiments_ended_->Add({{"state", ExperimentStateWord(r.state())}})
      .Increment();
  last_ended_experiment_ = r.id();
  // What a fleet pools: treatment effects over their planned duration,
  // not an A/A run nor one stopped early.
  if (r.state() == v1::EXPERIMENT_STATE_DONE && !r.aa()) ExportResult(r);
}

void PrometheusExporter::ObserveExperiment(const v1::Metrics& metrics) {
  const v1::ExperimentReport& r = metrics.experiment();
  const bool running =
      metrics.has_experiment() && r.state() == v1::EXPERIMENT_STATE_RUNNING;
  experiment_running_->Add({}).Set(running ? 1 : 0);
  if (!running) {
    if (metrics.has_experiment()) CountEnded(r);
    ClearExperiment();
    return;
  }
  ClearResult();  // a new experiment: the last one's result goes
  std::vector<std::pair<Gauges*, prometheus::Gauge*>> now;
  auto set = [&now](Gauges* family, const prometheus::Labels& labels,
                    double value) {
    prometheus::Gauge& gauge = family->Add(labels);
    gauge.Set(value);
    now.emplace_back(family, &gauge);
  };
  set(experiment_intervals_, {}, r.intervals());
  const ArmGauges arms = Arms(r);
  for (int arm : {1, 0}) {
    const char* word = arm == 1 ? "treated" : "control";
    set(experiment_units_, {{"arm", word}}, arms.units[arm]);
    if (arms.work[arm]) set(experiment_work_, {{"arm", word}}, *arms.work[arm]);
  }
  for (const auto& [metric, estimate] : Estimates(r)) {
    if (!estimate->valid()) continue;
    set(experiment_estimate_, {{"metric", metric}, {"bound", "ratio"}},
        estimate->ratio());
    set(experiment_estimate_, {{"metric", metric}, {"bound", "low"}},
        estimate->low());
    set(experiment_estimate_, {{"metric", metric}, {"bound", "high"}},
        estimate->high());
  }
  // No bound yet means no look yet: a p of 0 would read as certain harm.
  if (r.guardrail_bound() > 0) {
    set(experiment_guardrail_p_, {}, r.guardrail_p());
  }
  // What this tick no longer has (an estimate that stopped being valid).
  for (auto [family, gauge] : experiment_series_) {
    if (std::find(now.begin(), now.end(), std::pair{family, gauge}) ==
        now.end()) {
      family->Remove(gauge);
    }
  }
  experiment_series_ = std::move(now);
}

}  // namespace locus
