// The primary estimate, the ratio of totals, on cases small enough to
// follow by hand: its value, its clustered standard error and df, what a
// busy and an idle worker each weigh, the worker that burns CPU for no
// work, thin strata, and the CUPED adjustment.
#include "policy/experiment_ratio.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus::experiment {
namespace {

using ::testing::HasSubstr;

UnitTotals Unit(int stratum, Arm arm, double work, double cpu) {
  UnitTotals u;
  u.stratum = stratum;
  u.arm = arm;
  u.work = work;
  u.cpu_seconds = cpu;
  u.intervals = 1;
  return u;
}

// Treated (work, CPU) (12, 1), (20, 2), (33, 3): R = 65 / 6; control
// (10, 1), (22, 2), (27, 3): R = 59 / 6. log ratio ln(65 / 59) = 0.0968498.
// Influences u_i = (work_i - R cpu_i) / total work: treated 0.0179487,
// -0.0256410, 0.0076923; control 0.0028249, 0.0395480, -0.0423729. CPU
// shares h = 1/6, 2/6, 3/6, so each u_i^2 is divided by 1 - h_i = 5/6,
// 4/6, 3/6: treated variance 0.00149112, control 0.00594657, SE
// sqrt(0.00743769) = 0.0862421. df: with a_i = h_i^2 / (1 - h_i) = 1/30,
// 1/6, 1/2, each cell's sum h^2 + (sum a)^2 - sum a^2 = 14/36 + 0.49 -
// 0.278889 = 0.6, so 1 / 0.6 = 1.667 df a cell (not 2: the busiest worker
// holds half the CPU); two cells of equal CPU: 4 / 1.2 = 3.3333.
TEST(ExperimentRatioTest, MatchesAHandComputedExample) {
  std::vector<UnitTotals> units = {
      Unit(0, Arm::kTreated, 12, 1), Unit(0, Arm::kTreated, 20, 2),
      Unit(0, Arm::kTreated, 33, 3), Unit(0, Arm::kControl, 10, 1),
      Unit(0, Arm::kControl, 22, 2), Unit(0, Arm::kControl, 27, 3)};
  const RatioEstimate e = EstimateTotals(units);
  ASSERT_TRUE(e.valid) << e.why_not;
  EXPECT_NEAR(e.log_ratio, 0.0968498, 1e-7);
  EXPECT_NEAR(e.ratio, 65.0 / 59.0, 1e-12);
  EXPECT_NEAR(e.se, 0.0862421, 1e-7);
  EXPECT_NEAR(e.df, 10.0 / 3, 1e-9);
  EXPECT_LT(e.low, 1);
  EXPECT_GT(e.high, 1);
  EXPECT_NEAR(std::log(e.high) - e.log_ratio, e.log_ratio - std::log(e.low),
              1e-9);
  EXPECT_EQ(e.treated, 3);
  EXPECT_EQ(e.control, 3);
  EXPECT_FALSE(e.collapsed);
}

// A busy worker (100 CPU-s) and an idle one (1 CPU-s) per arm and node:
// the treated busy ones gain 5 %, the treated idle ones lose 30 %. Every
// worker counted alike says Locus loses (the geometric mean of +5 % and
// -30 % is -14 %); the host's work per CPU-second rose by about 4.6 %, and
// that is the primary estimate.
TEST(ExperimentRatioTest, TheTotalsFollowTheBusyWorkerWhereEqualWeightsDoNot) {
  std::vector<UnitTotals> units;
  for (int node = 0; node < 2; ++node) {
    const double wobble = 1 + 0.001 * node;
    units.push_back(Unit(node, Arm::kTreated, 105 * wobble, 100));
    units.push_back(Unit(node, Arm::kTreated, 0.7 / wobble, 1));
    units.push_back(Unit(node, Arm::kControl, 100 / wobble, 100));
    units.push_back(Unit(node, Arm::kControl, 1 * wobble, 1));
  }
  const RatioEstimate primary = EstimateTotals(units);
  const Estimate secondary = EstimateRatio(units);
  ASSERT_TRUE(primary.valid) << primary.why_not;
  ASSERT_TRUE(secondary.valid) << secondary.why_not;
  EXPECT_GT(primary.ratio, 1.04);
  EXPECT_LT(primary.ratio, 1.05);
  EXPECT_LT(secondary.ratio, 0.9);
}

// A treated worker that burnt 1 CPU-second and did no work is counted:
// the treated arm's ratio falls from 30 / 3 to 30 / 4. The equal-weight
// estimate cannot take its log and leaves it out.
TEST(ExperimentRatioTest, AWorkerWithCpuButNoWorkLowersTheRatio) {
  std::vector<UnitTotals> units = {
      Unit(0, Arm::kTreated, 10, 1),   Unit(0, Arm::kTreated, 11, 1),
      Unit(0, Arm::kTreated, 9, 1),    Unit(0, Arm::kControl, 10, 1),
      Unit(0, Arm::kControl, 10.5, 1), Unit(0, Arm::kControl, 9.5, 1)};
  const RatioEstimate before = EstimateTotals(units);
  units.push_back(Unit(0, Arm::kTreated, 0, 1));
  const RatioEstimate after = EstimateTotals(units);
  ASSERT_TRUE(before.valid && after.valid) << after.why_not;
  EXPECT_NEAR(before.ratio, 1.0, 1e-12);
  EXPECT_NEAR(after.ratio, 0.75, 1e-12);
  EXPECT_EQ(after.treated, 4);
  EXPECT_EQ(after.left_out, 0);
  EXPECT_GT(after.se, before.se);
  EXPECT_EQ(EstimateRatio(units).left_out, 1);
}

// One worker per arm in a stratum gives no variance there: the host is
// compared as one stratum. A stratum lacking an arm is left out, and a
// worker with neither work nor CPU time too, each counted.
TEST(ExperimentRatioTest, ThinStrataCollapseAndEmptyOnesAreCounted) {
  std::vector<UnitTotals> units = {
      Unit(0, Arm::kTreated, 110, 1), Unit(0, Arm::kControl, 100, 1),
      Unit(1, Arm::kTreated, 112, 1), Unit(1, Arm::kControl, 101, 1),
      Unit(2, Arm::kTreated, 50, 1),  Unit(0, Arm::kControl, 0, 0)};
  const RatioEstimate e = EstimateTotals(units);
  ASSERT_TRUE(e.valid) << e.why_not;
  EXPECT_TRUE(e.collapsed);
  EXPECT_EQ(e.strata, 1);
  EXPECT_EQ(e.dropped, 1);
  EXPECT_EQ(e.left_out, 1);
  EXPECT_NEAR(e.ratio, 222.0 / 201.0, 1e-12);
  // Too few to say anything, and why.
  const RatioEstimate none = EstimateTotals(
      {Unit(0, Arm::kTreated, 10, 1), Unit(0, Arm::kControl, 10, 1)});
  EXPECT_FALSE(none.valid);
  EXPECT_THAT(none.why_not, HasSubstr("has 1 treated, 1 control"));
}

// Strata are weighted by their CPU time: a node with 9 times the CPU of
// the other sets 90 % of the log ratio.
TEST(ExperimentRatioTest, StrataWeighByTheirCpuTime) {
  std::vector<UnitTotals> units;
  // Wobbles that sum to 2 in each arm: the ratios of totals are exactly
  // 1.10 on node 0 and 1 on node 1.
  for (double wobble : {0.99, 1.01}) {
    units.push_back(Unit(0, Arm::kTreated, 90 * 1.10 * wobble, 90));
    units.push_back(Unit(0, Arm::kControl, 90 * (3 - 2 * wobble), 90));
    units.push_back(Unit(1, Arm::kTreated, 10 * wobble, 10));
    units.push_back(Unit(1, Arm::kControl, 10 * (3 - 2 * wobble), 10));
  }
  const RatioEstimate e = EstimateTotals(units);
  ASSERT_TRUE(e.valid) << e.why_not;
  EXPECT_EQ(e.strata, 2);
  EXPECT_NEAR(e.log_ratio, 0.9 * std::log(1.10), 1e-9);
}

// Workers whose persistent differences dominate: the pre-period predicts
// them, CUPED takes them out, and the variance falls by what the report
// states. Without a pre-period for every worker, nothing is adjusted.
TEST(ExperimentRatioTest, CupedRemovesWhatThePrePeriodPredicts) {
  std::vector<UnitTotals> units;
  const double level[] = {0.8, 1.3, 1.0, 0.9, 1.2, 1.1, 0.7, 1.25};
  for (int i = 0; i < 8; ++i) {
    UnitTotals u = Unit(0, i % 2 ? Arm::kTreated : Arm::kControl, 0, 2);
    const double noise = 1 + 0.01 * ((i * 7) % 5 - 2);
    u.work = 2 * level[i] * noise * (i % 2 ? 1.05 : 1.0);
    u.pre_cpu_seconds = 1;
    u.pre_work = level[i];
    units.push_back(u);
  }
  const RatioEstimate plain = EstimateTotals(units, 0.95, false);
  const RatioEstimate cuped = EstimateTotals(units, 0.95, true);
  ASSERT_TRUE(plain.valid && cuped.valid) << cuped.why_not;
  EXPECT_FALSE(plain.adjusted);
  EXPECT_TRUE(cuped.adjusted);
  EXPECT_GT(cuped.variance_reduction, 0.9);
  // The levels (0.7 to 1.3) are what the plain interval carries; left with
  // the 2 % noise, the adjusted one is a fraction of its width, and still
  // holds the 5 % effect the units were given.
  EXPECT_LT(cuped.high - cuped.low, 0.3 * (plain.high - plain.low));
  EXPECT_LT(cuped.low, 1.05);
  EXPECT_GT(cuped.high, 1.05);
  EXPECT_NEAR(cuped.ratio, 1.05, 0.02);
  EXPECT_GE(cuped.df, 1);
  units[3].pre_cpu_seconds = 0;
  EXPECT_FALSE(EstimateTotals(units, 0.95, true).adjusted);
}

}  // namespace
}  // namespace locus::experiment
