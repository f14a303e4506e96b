// The secondary, equal-weight estimate on small cases (the simulations are
// in experiment_sim_test.cc).
#include "policy/experiment_stats.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus::experiment {
namespace {

using ::testing::HasSubstr;

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

}  // namespace
}  // namespace locus::experiment
