// The experiment's statistics by simulation, with fixed seeds, on noise
// shaped like hosts (experiment_sim.h): read at every interval as an
// operator would, A/A runs rarely say "significant"; the guardrail spends
// its 1 % and stops real harm; CUPED shrinks what a noisy host can detect.
// Each prints the rate it measured.
#include "tests/policy/experiment_sim.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "gtest/gtest.h"
#include "policy/experiment_sequential.h"

namespace locus::experiment {
namespace {

constexpr int kIntervals = 180;  // 30 minutes of 10 s: the default

const std::vector<HarmLook>& Guardrail() {
  static const std::vector<HarmLook> looks =
      PlannedHarmLooks(kIntervals, 3, 0.01);
  return looks;
}

// Significant at some look: the confidence sequence excluded 1 before the
// end, or the fixed-horizon interval at the planned end.
TEST(ExperimentSimTest, AnAaRunReadAtEveryIntervalIsRarelySignificant) {
  constexpr int kRuns = 2000;
  SimOptions o;
  o.live = true;
  int any = 0, at_end = 0, live = 0;
  for (int i = 0; i < kRuns; ++i) {
    const SimResult r = Simulate(kHostNoise, o, 1000 + i);
    ASSERT_TRUE(r.estimate.valid) << r.estimate.why_not;
    live += r.crossed;
    at_end += r.estimate.significant();
    any += r.crossed || r.estimate.significant();
  }
  std::printf(
      "A/A, %d runs: significant at any look %.2f %% (the sequence before "
      "the end %.2f %%), the interval at the planned end excludes 1 in "
      "%.2f %%\n",
      kRuns, any * 100.0 / kRuns, live * 100.0 / kRuns, at_end * 100.0 / kRuns);
  EXPECT_LE(any, kRuns * 6 / 100);
  EXPECT_GE(at_end, kRuns * 35 / 1000);
  EXPECT_LE(at_end, kRuns * 65 / 1000);
}

TEST(ExperimentSimTest, TheGuardrailStopsAnAaRunInAboutItsOnePercent) {
  constexpr int kRuns = 2000;
  SimOptions o;
  o.harm_looks = &Guardrail();
  int stopped = 0;
  for (int i = 0; i < kRuns; ++i)
    stopped += Simulate(kHostNoise, o, 3000 + i).stopped;
  std::printf("A/A, %d runs: the guardrail stops %.2f %%\n", kRuns,
              stopped * 100.0 / kRuns);
  EXPECT_GE(stopped, kRuns * 6 / 1000);
  EXPECT_LE(stopped, kRuns * 10 / 1000);
}

// Sixteen workers over 30 minutes. Workers lost mid-run under a load
// drift cost power (a lost worker's totals are from another load than its
// cell's): -3 % is stopped in 75 % of runs without losses, a little less
// with 1 worker in 20 lost.
TEST(ExperimentSimTest, TheGuardrailStopsRealHarm) {
  constexpr int kRuns = 1000;
  NoiseModel kept = kHostNoise;
  kept.lost = 0;
  SimOptions o;
  o.harm_looks = &Guardrail();
  int three = 0, three_kept = 0, ten = 0;
  for (int i = 0; i < kRuns; ++i) {
    o.effect = -0.03;
    three += Simulate(kHostNoise, o, 6000 + i).stopped;
    three_kept += Simulate(kept, o, 6000 + i).stopped;
    o.effect = -0.10;
    if (i < kRuns / 2) ten += Simulate(kHostNoise, o, 8000 + i).stopped;
  }
  std::printf(
      "-3 %%: stopped in %.1f %% (no worker lost: %.1f %%); -10 %%: stopped "
      "in %.1f %%\n",
      three * 100.0 / kRuns, three_kept * 100.0 / kRuns, ten * 200.0 / kRuns);
  EXPECT_GE(three_kept, kRuns * 75 / 100);
  EXPECT_GE(three, kRuns * 70 / 100);
  EXPECT_GE(ten, kRuns / 2 * 95 / 100);
}

double MedianDetectable(const NoiseModel& noise, const SimOptions& o,
                        uint64_t seed) {
  std::vector<double> d;
  for (int i = 0; i < 200; ++i) {
    const SimResult r = Simulate(noise, o, seed + i);
    if (r.estimate.valid) d.push_back(r.estimate.detectable);
  }
  std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
  return d[d.size() / 2];
}

// Worker SD 0.1: persistent differences between workers set a floor that
// time does not lower; a 10-minute pre-period predicts them.
TEST(ExperimentSimTest, CupedShrinksTheDetectableEffectOnANoisyHost) {
  NoiseModel noisy = kHostNoise;
  noisy.worker_sd = 0.1;
  SimOptions o;
  const double plain = MedianDetectable(noisy, o, 12000);
  o.pre_intervals = 60;
  o.cuped = true;
  const double cuped = MedianDetectable(noisy, o, 12000);
  std::printf(
      "worker SD 0.1, 16 workers, 30 min: detectable ±%.1f %%, "
      "with a 10-minute pre-period ±%.1f %%\n",
      plain * 100, cuped * 100);
  EXPECT_GE(plain / cuped, 3);
}

// A true +5 % on 16 workers over 30 minutes, lab-sized noise in a host's
// shape, is found at the planned end.
TEST(ExperimentSimTest, FindsAFivePercentGainOnSixteenWorkers) {
  constexpr int kRuns = 500;
  SimOptions o;
  o.effect = 0.05;
  int found = 0;
  for (int i = 0; i < kRuns; ++i) {
    const SimResult r = Simulate(kHostNoise, o, 5000 + i);
    found += r.estimate.significant() && r.estimate.ratio > 1;
  }
  std::printf("+5 %%: found in %.1f %%\n", found * 100.0 / kRuns);
  EXPECT_GE(found, kRuns * 8 / 10);
}

}  // namespace
}  // namespace locus::experiment
