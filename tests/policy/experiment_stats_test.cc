// The experiment's statistics: the interval's coverage, the power and the
// guardrail's false and true stops, by simulation with fixed seeds (the
// issue's sizes), then the estimate and the assignment on small cases.
#include "policy/experiment_stats.h"

#include <cmath>
#include <cstdio>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/policy/experiment_sim.h"

namespace locus::experiment {
namespace {

using ::testing::HasSubstr;

constexpr int kIntervals = 180;  // 30 minutes of 10 s: the default

TEST(ExperimentStatsTest, AaIntervalsExcludeOneInFivePercentAndRarelyStop) {
  int excluded = 0, stopped = 0;
  constexpr int kRuns = 2000;
  for (int i = 0; i < kRuns; ++i) {
    SimResult r = Simulate(kLabNoise, 16, kIntervals, 0, 1000 + i, true);
    stopped += r.stopped;
    if (!r.stopped) excluded += r.estimate.significant();
  }
  const double rate = static_cast<double>(excluded) / kRuns;
  const double stop_rate = static_cast<double>(stopped) / kRuns;
  std::printf("A/A: interval excludes 1 in %.2f %%, guardrail stops %.2f %%\n",
              rate * 100, stop_rate * 100);
  EXPECT_GE(rate, 0.035);
  EXPECT_LE(rate, 0.065);
  EXPECT_LE(stop_rate, 0.01);
}

TEST(ExperimentStatsTest, DetectsAFivePercentGainOnSixteenWorkers) {
  int found = 0;
  constexpr int kRuns = 1000;
  for (int i = 0; i < kRuns; ++i) {
    SimResult r = Simulate(kLabNoise, 16, kIntervals, 0.05, 5000 + i, true);
    found += !r.stopped && r.estimate.significant() && r.estimate.ratio > 1;
  }
  std::printf("+5 %%: detected in %.1f %%\n", found * 100.0 / kRuns);
  EXPECT_GE(found, kRuns * 8 / 10);
}

TEST(ExperimentStatsTest, TheGuardrailStopsATenPercentLoss) {
  int stopped = 0;
  constexpr int kRuns = 1000;
  for (int i = 0; i < kRuns; ++i) {
    stopped +=
        Simulate(kLabNoise, 16, kIntervals, -0.10, 9000 + i, true).stopped;
  }
  std::printf("-10 %%: guardrail stops in %.1f %%\n", stopped * 100.0 / kRuns);
  EXPECT_GE(stopped, kRuns * 9 / 10);
}

// Three workers per arm in one stratum, y = log(work / cpu):
// treated 1.0, 1.2, 1.4 (mean 1.2), control 0.9, 1.0, 1.1 (mean 1.0).
// Pooled variance (0.08 + 0.02) / (6 - 2) = 0.025, SE = sqrt(0.025 * (1/3
// + 1/3)) = 0.129099, t(4, 0.975) = 2.776445: log ratio 0.2 +- 0.358438.
// Detectable: t(4, 0.80) = 0.940965, exp((2.776445 + 0.940965) 0.129099)
// - 1 = 0.615938.
TEST(ExperimentStatsTest, MatchesAHandComputedExample) {
  std::vector<UnitTotals> units;
  for (double y : {1.0, 1.2, 1.4})
    units.push_back({0, Arm::kTreated, std::exp(y), 1, 1});
  for (double y : {0.9, 1.0, 1.1})
    units.push_back({0, Arm::kControl, std::exp(y), 1, 1});
  Estimate e = EstimateRatio(units);
  ASSERT_TRUE(e.valid) << e.why_not;
  EXPECT_NEAR(e.ratio, std::exp(0.2), 1e-9);
  EXPECT_NEAR(e.se_log, 0.129099, 1e-6);
  EXPECT_EQ(e.df, 4);
  EXPECT_NEAR(std::log(e.low), 0.2 - 0.358438, 1e-5);
  EXPECT_NEAR(std::log(e.high), 0.2 + 0.358438, 1e-5);
  EXPECT_NEAR(e.detectable, 0.615938, 1e-5);
  EXPECT_EQ(e.treated, 3);
  EXPECT_EQ(e.control, 3);
  EXPECT_FALSE(e.significant());
}

TEST(ExperimentStatsTest, TooFewWorkersGiveNoEstimateAndSayWhy) {
  std::vector<UnitTotals> units = {{0, Arm::kTreated, 10, 1, 1},
                                   {0, Arm::kTreated, 11, 1, 1},
                                   {0, Arm::kControl, 10, 1, 1},
                                   {0, Arm::kControl, 10, 0, 1}};  // no CPU
  Estimate e = EstimateRatio(units);
  EXPECT_FALSE(e.valid);
  EXPECT_THAT(e.why_not, HasSubstr("has 2 treated, 1 control"));
  EXPECT_THAT(e.why_not, HasSubstr("1 without work or CPU time"));
  EXPECT_EQ(e.left_out, 1);
  // A stratum with one arm only compares nothing.
  units = {{0, Arm::kTreated, 10, 1, 1},
           {0, Arm::kTreated, 11, 1, 1},
           {1, Arm::kControl, 10, 1, 1},
           {1, Arm::kControl, 12, 1, 1}};
  e = EstimateRatio(units);
  EXPECT_FALSE(e.valid);
  EXPECT_EQ(e.dropped, 4);
  EXPECT_THAT(e.why_not, HasSubstr("has 0 treated, 0 control"));
  EXPECT_FALSE(LookForHarm(e, 0.5, 0.4).stop);
}

// Workers without CPU time or without work are left out, not counted as
// zero: the estimate is the one without them.
TEST(ExperimentStatsTest, WorkersWithoutCpuTimeOrWorkAreLeftOut) {
  std::vector<UnitTotals> units;
  for (double y : {1.0, 1.2, 1.4})
    units.push_back({0, Arm::kTreated, std::exp(y), 1, 1});
  for (double y : {0.9, 1.0, 1.1})
    units.push_back({0, Arm::kControl, std::exp(y), 1, 1});
  const Estimate clean = EstimateRatio(units);
  units.push_back({0, Arm::kTreated, 5, 0, 1});  // exited before running
  units.push_back({0, Arm::kControl, 0, 2, 1});  // ran but sent nothing
  const Estimate e = EstimateRatio(units);
  ASSERT_TRUE(e.valid) << e.why_not;
  EXPECT_EQ(e.left_out, 2);
  EXPECT_EQ(e.treated, 3);
  EXPECT_EQ(e.control, 3);
  EXPECT_DOUBLE_EQ(e.ratio, clean.ratio);
  EXPECT_DOUBLE_EQ(e.se_log, clean.se_log);
}

// Log ratio -0.3 with SE 0.1 on 10 df: t = -3, one-sided p 0.0066718
// (integrating Student's density). Looking at tau 1 after tau 0.5 with
// alpha 0.01 spends 0.01 - 2 (1 - Phi(2.5758 / sqrt(0.5))) = 0.01 -
// 0.00026972 = 0.0097303: it stops. At tau 0.5 after 0.45 far less is
// spent, and it does not.
TEST(ExperimentStatsTest, TheGuardrailComparesPWithTheAlphaSpentSinceLastLook) {
  Estimate e;
  e.valid = true;
  e.ratio = std::exp(-0.3);
  e.se_log = 0.1;
  e.df = 10;
  GuardrailLook look = LookForHarm(e, 1.0, 0.5);
  EXPECT_NEAR(look.p, 0.0066718, 1e-6);
  EXPECT_NEAR(look.bound, 0.01 - 0.00026972, 1e-7);
  EXPECT_TRUE(look.stop);
  look = LookForHarm(e, 0.5, 0.45);
  EXPECT_LT(look.bound, 0.0002);
  EXPECT_FALSE(look.stop);
  e.ratio = 1.1;  // better, not worse
  EXPECT_GT(LookForHarm(e, 1.0, 0.5).p, 0.5);
  EXPECT_FALSE(LookForHarm(e, 1.0, 0.5).stop);
}

// Four workers on two nodes, one per arm on each: no variance within a
// node, so all four are compared at once (df 2).
TEST(ExperimentStatsTest, FourWorkersOnTwoNodesStillGiveAnInterval) {
  std::vector<UnitTotals> units = {{0, Arm::kTreated, 110, 1, 1},
                                   {0, Arm::kControl, 100, 1, 1},
                                   {1, Arm::kTreated, 112, 1, 1},
                                   {1, Arm::kControl, 101, 1, 1}};
  Estimate e = EstimateRatio(units);
  ASSERT_TRUE(e.valid) << e.why_not;
  EXPECT_EQ(e.df, 2);
  EXPECT_NEAR(e.ratio,
              std::exp((std::log(110.0) + std::log(112.0) - std::log(100.0) -
                        std::log(101.0)) /
                       2),
              1e-9);
}

TEST(ExperimentStatsTest, SpendingIsMonotoneAndEndsAtAlpha) {
  EXPECT_EQ(SpentAlpha(0.01, 0), 0);
  EXPECT_NEAR(SpentAlpha(0.01, 1), 0.01, 1e-12);
  double last = 0;
  for (double tau = 0.05; tau <= 1.0001; tau += 0.05) {
    const double spent = SpentAlpha(0.01, tau);
    EXPECT_GE(spent, last);
    last = spent;
  }
  EXPECT_LT(SpentAlpha(0.01, 0.25), 0.0001);  // little early
}

}  // namespace
}  // namespace locus::experiment
