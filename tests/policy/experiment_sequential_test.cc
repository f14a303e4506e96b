// The guardrail's exact group-sequential boundaries against published
// Lan-DeMets O'Brien-Fleming values, the budget they spend, and the
// normal-mixture confidence sequence's width.
#include "policy/experiment_sequential.h"

#include <cmath>

#include "gtest/gtest.h"

namespace locus::experiment {
namespace {

// One-sided alpha 0.025, two and five equally spaced looks: the boundaries
// Jennison and Turnbull (2000, table 7.6) and the ldbounds R package give,
// 2.9626 1.9686 and 4.8769 3.3569 2.6803 2.2898 2.0310.
TEST(ExperimentSequentialTest, MatchesPublishedObrienFlemingBoundaries) {
  const std::vector<double> two = HarmBoundaries({0.5, 1}, 0.025);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_NEAR(two[0], 2.9626, 5e-4);
  EXPECT_NEAR(two[1], 1.9686, 5e-4);
  const std::vector<double> five =
      HarmBoundaries({0.2, 0.4, 0.6, 0.8, 1}, 0.025);
  const double published[] = {4.8769, 3.3569, 2.6803, 2.2898, 2.0310};
  for (int k = 0; k < 5; ++k) EXPECT_NEAR(five[k], published[k], 5e-4) << k;
}

// The guardrail's own design, 178 looks (intervals 3 to 180) at 1 %: the
// boundaries spend the whole budget (a union bound would spend a
// twentieth), fall towards the end, and end near 2.4 instead of 3.5.
TEST(ExperimentSequentialTest, TheGuardrailSpendsItsWholeBudget) {
  const std::vector<HarmLook> planned = PlannedHarmLooks(180, 3, 0.01);
  ASSERT_EQ(planned.size(), 178u);
  EXPECT_TRUE(std::isinf(HarmBoundAt(planned, 1)));
  EXPECT_TRUE(std::isinf(HarmBoundAt(planned, 2)));
  std::vector<double> fractions, looks;
  for (int k = 3; k <= 180; ++k) {
    fractions.push_back(k / 180.0);
    looks.push_back(HarmBoundAt(planned, k));
    EXPECT_EQ(planned[k - 3].interval, k);
  }
  EXPECT_NEAR(CrossingProbability(fractions, looks, 0), 0.01, 2e-4);
  for (size_t k = 60; k < looks.size(); ++k) EXPECT_LT(looks[k], looks[k - 1]);
  EXPECT_GT(looks.back(), 2.2);
  EXPECT_LT(looks.back(), 2.6);
  // A harm of 3 standard errors at the end is stopped most of the time.
  EXPECT_GT(CrossingProbability(fractions, looks, -3.5), 0.75);
}

// A day of 10 s intervals looks at most 200 times, every 44th interval, the
// last among them (the first ~20 of those spend too little to set a bound).
TEST(ExperimentSequentialTest, ALongPlanLooksAtMostTwoHundredTimes) {
  const std::vector<HarmLook> planned = PlannedHarmLooks(8640, 3, 0.01);
  ASSERT_LE(planned.size(), static_cast<size_t>(kMaxLooks));
  int looks = 0;
  for (const HarmLook& look : planned) looks += !std::isinf(look.z);
  EXPECT_GE(looks, 150);
  EXPECT_EQ(planned.back().interval, 8640);
  EXPECT_TRUE(std::isinf(HarmBoundAt(planned, 8639)));
  EXPECT_GT(HarmBoundAt(planned, 8640), 2.2);
  EXPECT_LT(HarmBoundAt(planned, 8640), 2.6);
}

// A look: the t statistic's one-sided p against the nominal p of the
// boundary. Log ratio -0.3, SE 0.1, 10 df: t = -3, p = 0.0066718.
TEST(ExperimentSequentialTest, ALookComparesTheTailWithTheBoundary) {
  GuardrailLook look = LookForHarm(-0.3, 0.1, 10, 2.3);
  EXPECT_NEAR(look.p, 0.0066718, 1e-6);
  EXPECT_NEAR(look.bound, 0.0107241, 1e-6);  // Phi(-2.3)
  EXPECT_TRUE(look.stop);
  EXPECT_FALSE(LookForHarm(-0.3, 0.1, 10, 2.5).stop);  // Phi(-2.5) 0.0062
  EXPECT_FALSE(LookForHarm(0.3, 0.1, 10, 2.3).stop);   // better, not worse
  EXPECT_FALSE(LookForHarm(-0.3, 0.1, 10, kNoBound).stop);
}

// V = tau^2 = 0.0025, alpha 0.05: sqrt(2 (ln 2 + 2 ln 20)) = 3.6564 SEs,
// against 1.96 for one fixed look; with V far below tau^2 it widens slowly.
TEST(ExperimentSequentialTest, TheConfidenceSequenceIsWiderThanOneLook) {
  EXPECT_NEAR(MixtureHalfWidth(0.0025, 0.05, 0.05), 3.6564, 1e-4);
  const double tight = MixtureHalfWidth(0.0001, 0.05, 0.05);
  EXPECT_GT(tight, 1.96);
  EXPECT_LT(tight, 3.3);
  // On many df the sequence is the normal one; on few it is wider.
  const Sequence wide = ConfidenceSequence(0, 0.05, 1e6, 0.05, 0.05);
  EXPECT_NEAR(std::log(wide.high), 3.6564 * 0.05, 1e-4);
  EXPECT_GT(std::log(ConfidenceSequence(0, 0.05, 8, 0.05, 0.05).high),
            std::log(wide.high));
  EXPECT_FALSE(wide.excludes_one());
  EXPECT_TRUE(ConfidenceSequence(0.2, 0.05, 1e6, 0.05, 0.05).excludes_one());
}

}  // namespace
}  // namespace locus::experiment
