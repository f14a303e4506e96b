// The detectable effect of an experiment by workers and duration: the
// median, over 200 simulated A/A experiments, of the effect the estimate
// could detect with 80 % power, for intervals of 10 s. The noise is the
// lab's (kLabNoise) unless given:
//   experiment_power [--interval_sd=X] [--ar1=X] [--worker_sd=X] [--time_sd=X]
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
  NoiseModel noise = locus::experiment::kLabNoise;
  for (int i = 1; i < argc; ++i) {
    if (!Flag(argv[i], "--interval_sd", &noise.interval_sd) &&
        !Flag(argv[i], "--ar1", &noise.ar1) &&
        !Flag(argv[i], "--worker_sd", &noise.worker_sd) &&
        !Flag(argv[i], "--time_sd", &noise.time_sd)) {
      std::fprintf(stderr, "experiment_power: bad argument %s\n", argv[i]);
      return 2;
    }
  }
  std::printf(
      "noise: interval_sd %.4f, ar1 %.2f, worker_sd %.4f, time_sd %.4f\n\n",
      noise.interval_sd, noise.ar1, noise.worker_sd, noise.time_sd);
  std::printf("| workers | 10 min | 30 min | 60 min |\n|---|---|---|---|\n");
  for (int workers : {4, 8, 16, 64}) {
    std::printf("| %d |", workers);
    for (int minutes : {10, 30, 60}) {
      std::vector<double> detectable;
      for (int run = 0; run < 200; ++run) {
        detectable.push_back(locus::experiment::Simulate(noise, workers,
                                                         minutes * 6, 0,
                                                         77 + run, false)
                                 .estimate.detectable);
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
