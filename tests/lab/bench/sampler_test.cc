#include "tests/lab/bench/sampler.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

TEST(SamplerTest, SoftirqCountsOfOneVector) {
  const char kText[] =
      "                    CPU0       CPU1       CPU2       CPU3\n"
      "          HI:          0          0          0          0\n"
      "      NET_TX:          5          0          1          0\n"
      "      NET_RX:        120          7      90000          3\n";
  auto counts = ParseSoftirqCounts(kText, "NET_RX");
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_THAT(*counts, ElementsAre(120, 7, 90000, 3));
  EXPECT_EQ(ParseSoftirqCounts(kText, "BLOCK").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ParseSoftirqCounts("NET_RX: 1 x\n", "NET_RX").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SamplerTest, VmstatKeyMatchesWholeName) {
  const char kText[] =
      "numa_pages_migrated_extra 9\nnuma_pages_migrated 42\n"
      "pgmigrate_success 100\n";
  EXPECT_EQ(*ParseVmstat(kText, "numa_pages_migrated"), 42u);
  EXPECT_EQ(*ParseVmstat(kText, "pgmigrate_success"), 100u);
  EXPECT_EQ(ParseVmstat(kText, "pgmigrate").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(SamplerTest, ParseIds) {
  EXPECT_THAT(*ParseIds("12,13"), ElementsAre(12, 13));
  EXPECT_TRUE(ParseIds("")->empty());
  EXPECT_FALSE(ParseIds("12,x").ok());
  EXPECT_FALSE(ParseIds("-1").ok());
}

TEST(SamplerTest, MajorityNode) {
  EXPECT_EQ(MajorityNode({}), -1);
  EXPECT_EQ(MajorityNode({-1, -1}), -1);
  EXPECT_EQ(MajorityNode({1, 0, 1}), 1);
  EXPECT_EQ(MajorityNode({1, 0}), 0);  // tie: the lowest
}

TEST(SamplerTest, WindowCountsIncreaseOverTheTrailingWindow) {
  WindowCounts counts;
  EXPECT_THAT(counts.Over(1000), Pair(0, 0));
  counts.Add(0, 0, 0);
  counts.Add(500, 5, 10);
  counts.Add(1000, 5, 20);
  counts.Add(1500, 15, 30);
  // Within 1000 of t=1500: from the sample at 500.
  EXPECT_THAT(counts.Over(1000), Pair(10, 20));
  // Shorter than one period: the last step only.
  EXPECT_THAT(counts.Over(100), Pair(0, 0));
  // Longer than the history: from the first sample.
  EXPECT_THAT(counts.Over(10000), Pair(15, 30));
}

}  // namespace
}  // namespace locus
