// The detectable effect of an experiment by workers and duration: the
// median, over 200 simulated A/A experiments, of the effect the primary
// estimate (the ratio of totals) could detect with 80 % power, for
// intervals of 10 s. The noise is a host's shape with the lab's magnitudes
// (kHostNoise) unless given; --lab: the lab's own (every worker equal);
// --pre=N: a pre-period of N intervals and CUPED.
//   experiment_power [--lab] [--interval_sd=X] [--ar1=X] [--worker_sd=X]
//     [--time_sd=X] [--cpu_spread=X] [--worker_df=X] [--drift=X]
//     [--lost=X] [--pre=N]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tests/policy/experiment_sim.h"

namespace {

bool Flag(const char* arg, const char* name, double* value) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
  char* end = nullptr;
  *value = std::strtod(arg + n + 1, &end);
  return end != arg + n + 1 && *end == '\0';
}

}  // namespace

int main(int argc, char** argv) {
  using locus::experiment::NoiseModel;
  NoiseModel noise = locus::experiment::kHostNoise;
  double pre = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--lab") == 0) {
      noise = locus::experiment::kLabNoise;
    } else if (!Flag(argv[i], "--interval_sd", &noise.interval_sd) &&
               !Flag(argv[i], "--ar1", &noise.ar1) &&
               !Flag(argv[i], "--worker_sd", &noise.worker_sd) &&
               !Flag(argv[i], "--time_sd", &noise.time_sd) &&
               !Flag(argv[i], "--cpu_spread", &noise.cpu_spread) &&
               !Flag(argv[i], "--worker_df", &noise.worker_df) &&
               !Flag(argv[i], "--drift", &noise.drift) &&
               !Flag(argv[i], "--lost", &noise.lost) &&
               !Flag(argv[i], "--pre", &pre)) {
      std::fprintf(stderr, "experiment_power: bad argument %s\n", argv[i]);
      return 2;
    }
  }
  std::printf(
      "noise: interval_sd %.4f, ar1 %.2f, worker_sd %.4f, time_sd %.4f, "
      "cpu_spread %.0fx, worker effects %s, drift %.2f, lost %.2f; "
      "pre-period %.0f intervals%s\n\n",
      noise.interval_sd, noise.ar1, noise.worker_sd, noise.time_sd,
      noise.cpu_spread, noise.worker_df > 0 ? "t" : "normal", noise.drift,
      noise.lost, pre, pre > 0 ? " (CUPED)" : "");
  std::printf("| workers | 10 min | 30 min | 60 min |\n|---|---|---|---|\n");
  for (int workers : {4, 8, 16, 64}) {
    std::printf("| %d |", workers);
    for (int minutes : {10, 30, 60}) {
      locus::experiment::SimOptions o;
      o.workers = workers;
      o.intervals = minutes * 6;
      o.pre_intervals = static_cast<int>(pre);
      o.cuped = pre > 0;
      std::vector<double> detectable;
      for (int run = 0; run < 200; ++run) {
        const auto r = locus::experiment::Simulate(noise, o, 77 + run);
        if (r.estimate.valid) detectable.push_back(r.estimate.detectable);
      }
      if (detectable.empty()) {
        std::printf(" - |");
        continue;
      }
      std::nth_element(detectable.begin(),
                       detectable.begin() + detectable.size() / 2,
                       detectable.end());
      std::printf(" ±%.1f %% |", detectable[detectable.size() / 2] * 100);
    }
    std::printf("\n");
  }
  return 0;
}
