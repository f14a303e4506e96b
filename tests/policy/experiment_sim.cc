#include "tests/policy/experiment_sim.h"

#include <cmath>
#include <random>

#include "policy/experiment_sequential.h"

namespace locus::experiment {
namespace {

struct Worker {
  double effect = 0;  // persistent, log
  double cpu = 0;     // CPU seconds per interval at the start
  double noise = 0;   // its per-interval sd
  double state = 0;   // AR(1)
  int lost_at = 0;    // 0: never
};

std::vector<Worker> Draw(const NoiseModel& noise, const SimOptions& o,
                         std::mt19937_64& rng) {
  std::normal_distribution<double> z(0, 1);
  std::uniform_real_distribution<double> unit(0, 1);
  std::student_t_distribution<double> t(noise.worker_df > 0 ? noise.worker_df
                                                            : 1);
  // Student's t scaled to sd 1 (df > 2).
  const double t_scale =
      noise.worker_df > 2 ? std::sqrt((noise.worker_df - 2) / noise.worker_df)
                          : 1;
  const double spread = std::log(noise.cpu_spread);
  std::vector<Worker> workers(o.workers);
  for (Worker& w : workers) {
    const double e = noise.worker_df > 0 ? t(rng) * t_scale : z(rng);
    w.effect = noise.worker_sd * e;
    w.cpu = noise.cpu_mean * std::exp(spread * (unit(rng) - 0.5));
    // A busier worker serves more requests: less noise per interval.
    w.noise = noise.interval_sd * std::sqrt(noise.cpu_mean / w.cpu);
    w.state = w.noise * z(rng);
    if (unit(rng) < noise.lost)
      w.lost_at = 1 + static_cast<int>(unit(rng) * o.intervals);
  }
  return workers;
}

}  // namespace

SimResult Simulate(const NoiseModel& noise, const SimOptions& o,
                   uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, 1);
  std::vector<UnitInfo> infos;
  for (int w = 0; w < o.workers; ++w) infos.push_back({w + 1, w % 2, 1});
  const std::vector<Arm> arms = AssignArms(infos, rng());
  std::vector<Worker> workers = Draw(noise, o, rng);
  std::vector<UnitTotals> totals(o.workers);
  for (int w = 0; w < o.workers; ++w) {
    totals[w].stratum = w % 2;
    totals[w].arm = arms[w];
  }
  const double keep = std::sqrt(1 - noise.ar1 * noise.ar1);
  SimResult result;
  for (int t = 1 - o.pre_intervals; t <= o.intervals; ++t) {
    const double shock = noise.time_sd * z(rng);
    const double drift = noise.drift * std::max(t, 0) / o.intervals;
    for (int w = 0; w < o.workers; ++w) {
      Worker& k = workers[w];
      k.state = noise.ar1 * k.state + keep * k.noise * z(rng);
      if (k.lost_at > 0 && t > k.lost_at) continue;
      double y = 10 + k.effect + shock + k.state + 0.5 * drift;
      const bool pre = t <= 0;
      if (!pre && arms[w] == Arm::kTreated) y += std::log1p(o.effect);
      const double cpu = k.cpu * std::exp(drift);
      (pre ? totals[w].pre_work : totals[w].work) += std::exp(y) * cpu;
      (pre ? totals[w].pre_cpu_seconds : totals[w].cpu_seconds) += cpu;
      if (!pre) ++totals[w].intervals;
    }
    if (t < o.first_look || t >= o.intervals) continue;
    if (!o.live && o.harm_looks == nullptr) continue;
    const RatioEstimate e = EstimateTotals(totals, 0.95, o.cuped);
    if (!e.valid) continue;
    if (o.live && !result.crossed)
      result.crossed =
          ConfidenceSequence(e.log_ratio, e.se, e.df).excludes_one();
    if (o.harm_looks != nullptr &&
        LookForHarm(e.log_ratio, e.se, e.df, HarmBoundAt(*o.harm_looks, t))
            .stop) {
      result.stopped = true;
      result.stopped_at = t;
      break;
    }
  }
  result.estimate = EstimateTotals(totals, 0.95, o.cuped);
  result.secondary = EstimateRatio(totals);
  // The guardrail's last look is at the end.
  if (!result.stopped && o.harm_looks != nullptr && result.estimate.valid &&
      LookForHarm(result.estimate.log_ratio, result.estimate.se,
                  result.estimate.df, HarmBoundAt(*o.harm_looks, o.intervals))
          .stop) {
    result.stopped = true;
    result.stopped_at = o.intervals;
  }
  return result;
}

}  // namespace locus::experiment
