// Pooling hosts: three records to a result computed by hand.
#include "policy/experiment_pool.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus::experiment {
namespace {

// Log ratios 0.02, 0.05, -0.01 with SEs 0.01, 0.02, 0.015: weights 1/SE^2
// 10000, 2500, 4444.44 (sum 16944.44), fixed effect 280.556 / 16944.44 =
// 0.0165574, SE 1 / sqrt(16944.44) = 0.0076822. Q = 10000 (0.0034426)^2 +
// 2500 (0.0334426)^2 + 4444.44 (0.0265574)^2 = 6.049180 on 2 df: I^2 =
// 4.049180 / 6.049180 = 0.669377; tau^2 = 4.049180 / (16944.44 -
// 126003086.4 / 16944.44) = 0.00042586. Random-effects weights 1 / (SE^2 +
// tau^2) 1901.64, 1210.86, 1536.42: estimate 0.0178991, SE 0.0146664.
TEST(ExperimentPoolTest, ThreeHostsPoolToTheHandComputedResult) {
  const PooledEstimate p =
      Pool({{"a", 0.02, 0.01}, {"b", 0.05, 0.02}, {"c", -0.01, 0.015}});
  ASSERT_TRUE(p.valid) << p.why_not;
  EXPECT_EQ(p.hosts, 3);
  EXPECT_NEAR(p.fixed, 0.0165574, 1e-7);
  EXPECT_NEAR(p.fixed_se, 0.0076822, 1e-7);
  EXPECT_NEAR(p.q, 6.049180, 1e-6);
  EXPECT_NEAR(p.i2, 0.669377, 1e-6);
  EXPECT_NEAR(p.tau2, 0.00042586, 1e-8);
  EXPECT_NEAR(p.random, 0.0178991, 1e-7);
  EXPECT_NEAR(p.random_se, 0.0146664, 1e-7);
  EXPECT_NEAR(p.random_low, std::exp(0.0178991 - 1.959964 * 0.0146664), 1e-6);
  EXPECT_NEAR(p.spread, 0.03, 1e-12);  // sd of 0.02, 0.05, -0.01
}

// Hosts that agree: no heterogeneity, and random equals fixed.
TEST(ExperimentPoolTest, AgreeingHostsHaveNoSpreadBetweenThem) {
  const PooledEstimate p = Pool({{"a", 0.03, 0.01}, {"b", 0.031, 0.01}});
  ASSERT_TRUE(p.valid);
  EXPECT_EQ(p.i2, 0);
  EXPECT_EQ(p.tau2, 0);
  EXPECT_DOUBLE_EQ(p.random, p.fixed);
  EXPECT_THAT(Pool({{"a", 0.03, 0}}).why_not, ::testing::HasSubstr("a"));
  EXPECT_FALSE(Pool({}).valid);
}

}  // namespace
}  // namespace locus::experiment
