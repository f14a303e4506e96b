#include "tests/policy/experiment_sim.h"

#include <cmath>
#include <random>
#include <vector>

namespace locus::experiment {

SimResult Simulate(const NoiseModel& noise, int workers, int intervals,
                   double effect, uint64_t seed, bool guardrail) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, 1);
  std::vector<UnitInfo> infos;
  for (int w = 0; w < workers; ++w) infos.push_back({w + 1, w % 2, 1});
  const std::vector<Arm> arms = AssignArms(infos, rng());
  std::vector<double> worker(workers), state(workers);
  for (int w = 0; w < workers; ++w) {
    worker[w] = noise.worker_sd * z(rng);
    state[w] = noise.interval_sd * z(rng);
  }
  std::vector<UnitTotals> totals(workers);
  for (int w = 0; w < workers; ++w) {
    totals[w].stratum = w % 2;
    totals[w].arm = arms[w];
  }
  const double innovation =
      noise.interval_sd * std::sqrt(1 - noise.ar1 * noise.ar1);
  SimResult result;
  double previous_tau = 0;
  for (int t = 1; t <= intervals; ++t) {
    const double shock = noise.time_sd * z(rng);
    for (int w = 0; w < workers; ++w) {
      state[w] = noise.ar1 * state[w] + innovation * z(rng);
      double y = 10 + worker[w] + shock + state[w];
      if (arms[w] == Arm::kTreated) y += std::log1p(effect);
      totals[w].work += std::exp(y) * noise.cpu_mean;
      totals[w].cpu_seconds += noise.cpu_mean;
      ++totals[w].intervals;
    }
    if (!guardrail || t < 3) continue;
    const double tau = static_cast<double>(t) / intervals;
    const GuardrailLook look =
        LookForHarm(EstimateRatio(totals), tau, previous_tau);
    previous_tau = tau;
    if (look.stop) {
      result.stopped = true;
      result.stopped_at = t;
      break;
    }
  }
  result.estimate = EstimateRatio(totals);
  return result;
}

}  // namespace locus::experiment
