#include "common/rate_bucket.h"

#include "gtest/gtest.h"

namespace locus {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;

TEST(RateBucket, StartsFullAndRefillsAtItsRate) {
  RateBucket bucket(/*per_second=*/2, /*burst=*/3);
  EXPECT_TRUE(bucket.Take(0));
  EXPECT_TRUE(bucket.Take(0));
  EXPECT_TRUE(bucket.Take(0));
  EXPECT_FALSE(bucket.Take(0));
  EXPECT_TRUE(bucket.Take(kSecond / 2));  // one token back
  EXPECT_FALSE(bucket.Take(kSecond / 2));
  EXPECT_TRUE(bucket.Take(10 * kSecond));  // refilled to the burst, no more
  EXPECT_TRUE(bucket.Take(10 * kSecond));
  EXPECT_TRUE(bucket.Take(10 * kSecond));
  EXPECT_FALSE(bucket.Take(10 * kSecond));
}

// A charge below zero is a debt: refills repay it before anything can be
// taken again.
TEST(RateBucket, AChargeBelowZeroIsRepaidFirst) {
  RateBucket bucket(/*per_second=*/1, /*burst=*/1);
  bucket.Add(-2);
  EXPECT_EQ(bucket.Tokens(0), -1);
  EXPECT_FALSE(bucket.Take(kSecond));  // back to 0
  EXPECT_FALSE(bucket.Take(kSecond + kSecond / 2));
  EXPECT_TRUE(bucket.Take(2 * kSecond));
  bucket.Add(5);  // never above the burst
  EXPECT_EQ(bucket.Tokens(2 * kSecond), 1);
}

}  // namespace
}  // namespace locus
