// locus_work_bucket (bpf/include/locus/work.h), which the BPF program runs
// and the agent's quantiles invert, against the definition written plainly:
// below 16 us one bucket per microsecond, then 16 per power of two, and
// 2^30 us and more in the last bucket.
#include <bit>
#include <cstdint>
#include <limits>

#include "gtest/gtest.h"
#include "locus/work.h"
#include "policy/experiment_latency.h"

namespace locus {
namespace {

uint32_t Definition(uint64_t us) {
  if (us < 16) return us;
  int msb = 63 - std::countl_zero(us);
  if (msb > 29) return LOCUS_WORK_BUCKETS - 1;
  return (msb - 3) * 16 + ((us >> (msb - 4)) & 15);
}

TEST(WorkBucketTest, LayoutIs432Buckets) { EXPECT_EQ(LOCUS_WORK_BUCKETS, 432); }

TEST(WorkBucketTest, AgreesWithItsDefinitionAtTheEdges) {
  struct Case {
    uint64_t us;
    uint32_t bucket;
  };
  const Case cases[] = {
      {0, 0},
      {15, 15},
      {16, 16},
      {17, 17},
      {31, 31},
      {32, 32},  // 2^5: the first bucket two microseconds wide
      {33, 32},
      {(uint64_t{1} << 30) - 1, 431},
      {uint64_t{1} << 30, 431},
      {std::numeric_limits<uint64_t>::max(), 431},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(locus_work_bucket(c.us), c.bucket) << c.us;
    EXPECT_EQ(Definition(c.us), c.bucket) << c.us;
  }
}

TEST(WorkBucketTest, MonotoneAndContiguous) {
  uint32_t previous = locus_work_bucket(0);
  EXPECT_EQ(previous, 0u);
  for (uint64_t us = 1; us <= 65536; ++us) {
    uint32_t b = locus_work_bucket(us);
    ASSERT_EQ(b, Definition(us)) << us;
    // Never down, never a bucket skipped.
    ASSERT_TRUE(b == previous || b == previous + 1) << us;
    previous = b;
  }
}

TEST(WorkBucketTest, EveryPowerOfTwoStartsABucketRow) {
  // 2^k for 4 <= k <= 29 is the first bucket of row k - 3; all in range.
  for (int k = 4; k <= 29; ++k) {
    uint64_t us = uint64_t{1} << k;
    EXPECT_EQ(locus_work_bucket(us), static_cast<uint32_t>((k - 3) * 16)) << k;
    EXPECT_EQ(locus_work_bucket(us - 1),
              static_cast<uint32_t>((k - 3) * 16 - 1))
        << k;
  }
}

// What the program counts is what the experiment's quantiles read: every
// bucket's bounds (policy/experiment_latency.h) map back to it.
TEST(WorkBucketTest, TheQuantilesInvertIt) {
  for (int i = 0; i < experiment::kLatencyBuckets; ++i) {
    const auto low = static_cast<uint64_t>(experiment::BucketLowUs(i));
    const auto high = static_cast<uint64_t>(experiment::BucketHighUs(i));
    ASSERT_EQ(locus_work_bucket(low), static_cast<uint32_t>(i)) << i;
    ASSERT_EQ(locus_work_bucket(high - 1), static_cast<uint32_t>(i)) << i;
  }
}

}  // namespace
}  // namespace locus
