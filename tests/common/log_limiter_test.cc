// common/log_limiter.h: the first few entries per key and interval, then a
// count, so that no one outside can flood the log.
#include "common/log_limiter.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;
constexpr uint64_t kMinute = 60 * kSecond;

int Allowed(LogLimiter& limiter, absl::string_view key, int tries,
            uint64_t now_ns) {
  int allowed = 0;
  for (int i = 0; i < tries; ++i) allowed += limiter.Allow(key, now_ns);
  return allowed;
}

TEST(LogLimiterTest, FirstFivePerKeyThenOneSummaryPerInterval) {
  LogLimiter limiter(5, kMinute);
  // 300 look-alikes in 7 s: five lines.
  int allowed = 0;
  for (int i = 0; i < 300; ++i) {
    allowed += limiter.Allow("owner", i * 7 * kSecond / 300);
  }
  EXPECT_EQ(allowed, 5);
  EXPECT_THAT(limiter.TakeSuppressed(30 * kSecond), testing::IsEmpty());
  std::vector<LogLimiter::Suppressed> summary = limiter.TakeSuppressed(kMinute);
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(summary[0].key, "owner");
  EXPECT_EQ(summary[0].count, 295u);
  EXPECT_EQ(summary[0].since_ns, 0u);
  // The next interval starts with the summary: five more, then counted.
  EXPECT_EQ(Allowed(limiter, "owner", 8, kMinute + kSecond), 5);
  EXPECT_THAT(limiter.TakeSuppressed(kMinute + 30 * kSecond),
              testing::IsEmpty());
  summary = limiter.TakeSuppressed(2 * kMinute);
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(summary[0].count, 3u);
  EXPECT_EQ(summary[0].since_ns, kMinute);
}

TEST(LogLimiterTest, KeysAreCappedApart) {
  LogLimiter limiter(2, kMinute);
  EXPECT_EQ(Allowed(limiter, "owner", 4, 0), 2);
  EXPECT_EQ(Allowed(limiter, "writable", 3, 0), 2);
  std::vector<LogLimiter::Suppressed> summary = limiter.TakeSuppressed(kMinute);
  ASSERT_EQ(summary.size(), 2u);
  EXPECT_EQ(summary[0].key, "owner");
  EXPECT_EQ(summary[0].count, 2u);
  EXPECT_EQ(summary[1].key, "writable");
  EXPECT_EQ(summary[1].count, 1u);
}

TEST(LogLimiterTest, AQuietKeyStartsAfreshWithoutASummary) {
  LogLimiter limiter(2, kMinute);
  EXPECT_EQ(Allowed(limiter, "owner", 2, 0), 2);
  EXPECT_THAT(limiter.TakeSuppressed(kMinute), testing::IsEmpty());
  EXPECT_EQ(Allowed(limiter, "owner", 2, kMinute + 1), 2);
  // Held back but not yet summed up: the window stays open past its end,
  // so the summary counts every entry held back.
  EXPECT_FALSE(limiter.Allow("owner", kMinute + 2));
  EXPECT_FALSE(limiter.Allow("owner", 3 * kMinute));
  std::vector<LogLimiter::Suppressed> summary =
      limiter.TakeSuppressed(3 * kMinute);
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(summary[0].count, 2u);
}

}  // namespace
}  // namespace locus
