// The switchback design's order of blocks and its paired estimate, and by
// simulation (fixed seeds) that the estimate recovers a host-wide effect
// under a common shock and holds its error rate in A/A.
#include "policy/experiment_switchback.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace locus::experiment {
namespace {

TEST(SwitchbackScheduleTest, EachPairHasOneOnAndOneOffInADrawnOrder) {
  const std::vector<bool> on = SwitchbackSchedule(1000, 7);
  ASSERT_EQ(on.size(), 2000u);
  int on_first = 0;
  for (size_t i = 0; i < on.size(); i += 2) {
    EXPECT_NE(on[i], on[i + 1]) << "pair " << i / 2;
    on_first += on[i] ? 1 : 0;
  }
  // Either order about half the time (binomial sd ~16 of 1000).
  EXPECT_GT(on_first, 440);
  EXPECT_LT(on_first, 560);
  EXPECT_EQ(SwitchbackSchedule(1000, 7), on)
      << "not reproducible from its seed";
  EXPECT_NE(SwitchbackSchedule(1000, 8), on);
  EXPECT_TRUE(SwitchbackSchedule(0, 7).empty());
}

std::vector<BlockFigure> Blocks(
    const std::vector<std::pair<double, double>>& on_off) {
  std::vector<BlockFigure> blocks;
  for (uint32_t i = 0; i < on_off.size(); ++i) {
    blocks.push_back({i, true, on_off[i].first, true});
    blocks.push_back({i, false, on_off[i].second, true});
  }
  return blocks;
}

TEST(PairedRatioTest, IsTheGeometricMeanOfThePairsRatiosWithTsInterval) {
  // Ratios 1.1, 1.3, 1.2: logs' mean and sd by hand.
  const RatioEstimate e =
      PairedRatio(Blocks({{110, 100}, {130, 100}, {60, 50}}));
  ASSERT_TRUE(e.valid) << e.why_not;
  const double d[] = {std::log(1.1), std::log(1.3), std::log(1.2)};
  const double mean = (d[0] + d[1] + d[2]) / 3;
  double ss = 0;
  for (double x : d) ss += (x - mean) * (x - mean);
  const double se = std::sqrt(ss / 2 / 3);
  EXPECT_NEAR(e.log_ratio, mean, 1e-12);
  EXPECT_NEAR(e.se, se, 1e-12);
  EXPECT_EQ(e.df, 2);
  EXPECT_EQ(e.treated, 3);
  // t(2) 0.975 quantile: 4.302653.
  EXPECT_NEAR(e.low, std::exp(mean - 4.302653 * se), 1e-5);
  EXPECT_NEAR(e.high, std::exp(mean + 4.302653 * se), 1e-5);
}

TEST(PairedRatioTest, OnlyCompletePairsWithWorkCount) {
  std::vector<BlockFigure> blocks = Blocks({{110, 100}, {130, 100}, {60, 50}});
  blocks[5].complete = false;  // pair 2's off block was cut short
  blocks[2].value = 0;         // pair 1's on block did no work
  RatioEstimate e = PairedRatio(blocks);
  EXPECT_FALSE(e.valid);
  EXPECT_EQ(e.treated, 1);
  EXPECT_NE(e.why_not.find("two complete pairs"), std::string::npos)
      << e.why_not;
  // A pair with one block only (a run stopped in its first block).
  e = PairedRatio({{0, true, 100, true}, {1, false, 90, true}});
  EXPECT_FALSE(e.valid);
  EXPECT_EQ(e.treated, 0);
  // Identical ratios leave nothing to put an interval on.
  e = PairedRatio(Blocks({{110, 100}, {220, 200}}));
  EXPECT_FALSE(e.valid);
  EXPECT_NE(e.why_not.find("do not vary"), std::string::npos) << e.why_not;
}

// One simulated switchback on a host of 8 workers: each block's figure is
// the host's bytes over its CPU time. What moves the whole host (the
// traffic's level) is a common shock, drifting from block to block (AR(1),
// 0.8, sd 10 %: twice the effect looked for), on top of each worker's own
// noise (5 %) and the true effect of Locus on (`effect`, a factor).
RatioEstimate SimulateRun(std::mt19937_64& rng, uint32_t pairs, double effect,
                          uint64_t seed) {
  const std::vector<bool> schedule = SwitchbackSchedule(pairs, seed);
  std::normal_distribution<double> shock_step(0, 0.10 * std::sqrt(1 - 0.64));
  std::normal_distribution<double> worker_noise(0, 0.05);
  std::normal_distribution<double> start(0, 0.10);
  double shock = start(rng);
  std::vector<BlockFigure> blocks;
  for (size_t b = 0; b < schedule.size(); ++b) {
    shock = 0.8 * shock + shock_step(rng);
    double bytes = 0, cpu = 0;
    for (int w = 0; w < 8; ++w) {
      const double cpu_w = 1.0 + 0.25 * w;  // workers of unequal size
      const double log_rate =
          shock + worker_noise(rng) + (schedule[b] ? std::log(effect) : 0);
      bytes += cpu_w * 1e6 * std::exp(log_rate);
      cpu += cpu_w;
    }
    blocks.push_back(
        {static_cast<uint32_t>(b / 2), schedule[b], bytes / cpu, true});
  }
  return PairedRatio(blocks);
}

TEST(SwitchbackSimulationTest, RecoversAHostEffectUnderACommonShock) {
  std::mt19937_64 rng(20261206);
  const int runs = 4000;
  int covered = 0, harmful = 0;
  double log_sum = 0;
  for (int run = 0; run < runs; ++run) {
    const RatioEstimate e = SimulateRun(rng, 6, 0.95, rng());
    ASSERT_TRUE(e.valid) << e.why_not;
    covered += e.low <= 0.95 && 0.95 <= e.high ? 1 : 0;
    harmful += e.high < 1 ? 1 : 0;
    log_sum += e.log_ratio;
  }
  const double coverage = static_cast<double>(covered) / runs;
  const double found = static_cast<double>(harmful) / runs;
  std::printf("switchback, 6 pairs, -5 %%: coverage %.4f, harm found %.4f\n",
              coverage, found);
  EXPECT_GE(coverage, 0.95);
  // Unbiased: the drift inside a pair favours on as often as off.
  EXPECT_NEAR(std::exp(log_sum / runs), 0.95, 0.003);
}

TEST(SwitchbackSimulationTest, AnAaRunExcludesNoEffectFivePercentOfTheTime) {
  std::mt19937_64 rng(6122026);
  const int runs = 4000;
  int excluded = 0;
  for (int run = 0; run < runs; ++run) {
    const RatioEstimate e = SimulateRun(rng, 6, 1.0, rng());
    ASSERT_TRUE(e.valid) << e.why_not;
    excluded += e.significant() ? 1 : 0;
  }
  const double rate = static_cast<double>(excluded) / runs;
  std::printf("switchback A/A, 6 pairs: excluded 1 in %.4f of runs\n", rate);
  EXPECT_NEAR(rate, 0.05, 0.015);
}

}  // namespace
}  // namespace locus::experiment
