// Sizing an experiment for the effect it must detect from the host's last
// run.
#include "policy/experiment_plan.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus::experiment {
namespace {

using ::testing::HasSubstr;

// The last run: ±2 % with 16 workers over 180 intervals. For ±4 % with the
// same workers a quarter of them suffice ((2 / 4)^2 180 = 45); for ±1 %
// no length does.
TEST(ExperimentPlanTest, SizesTheDurationOrSaysWhatItCouldDetect) {
  const Noise noise{0.02, 180, 16};
  Plan plan = SizeExperiment(0.04, noise, 16, 0);
  ASSERT_TRUE(plan.ok) << plan.why_not;
  EXPECT_EQ(plan.intervals, 45);
  EXPECT_NEAR(plan.detectable, 0.04, 1e-12);
  // Asked for longer: fine, at the floor.
  plan = SizeExperiment(0.04, noise, 16, 180);
  EXPECT_TRUE(plan.ok);
  EXPECT_NEAR(plan.detectable, 0.02, 1e-12);
  // Asked for shorter than it needs: refused with the length it needs.
  plan = SizeExperiment(0.04, noise, 16, 20);
  EXPECT_FALSE(plan.ok);
  EXPECT_THAT(plan.why_not, HasSubstr("needs 45 intervals"));
  // Below the floor.
  plan = SizeExperiment(0.01, noise, 16, 0);
  EXPECT_FALSE(plan.ok);
  EXPECT_THAT(plan.why_not, HasSubstr("could detect ±2.0 % with 16 workers"));
  // Four times the workers halve the floor.
  plan = SizeExperiment(0.01, noise, 64, 0);
  EXPECT_TRUE(plan.ok) << plan.why_not;
  EXPECT_EQ(plan.intervals, 180);
  // No noise measured yet.
  EXPECT_THAT(SizeExperiment(0.03, Noise{}, 16, 0).why_not,
              HasSubstr("run an A/A experiment"));
}

}  // namespace
}  // namespace locus::experiment
