// The systemd watchdog: which ticks it can cover, and that its thread pings
// while the loop moves and stops when the loop is stuck.
#include "agent/daemon/watchdog.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using ::testing::HasSubstr;

TEST(Watchdog, ATickLongerThanHalfTheIntervalIsRefused) {
  absl::Status refused = CheckTickCovered(absl::Seconds(15), absl::Seconds(10));
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("--tick=15s"));
  EXPECT_THAT(refused.message(), HasSubstr("WatchdogSec=10s"));
  EXPECT_THAT(refused.message(), HasSubstr("at most half"));
  EXPECT_FALSE(CheckTickCovered(absl::Seconds(6), absl::Seconds(10)).ok());
  EXPECT_TRUE(CheckTickCovered(absl::Seconds(5), absl::Seconds(10)).ok());
  EXPECT_TRUE(CheckTickCovered(absl::Seconds(1), absl::Seconds(10)).ok());
}

TEST(Watchdog, IntervalComesFromSystemdsEnvironment) {
  unsetenv("WATCHDOG_PID");
  unsetenv("WATCHDOG_USEC");
  EXPECT_EQ(SystemdWatchdogInterval(), std::nullopt);
  setenv("WATCHDOG_USEC", "10000000", 1);
  EXPECT_EQ(SystemdWatchdogInterval(), absl::Seconds(10));
  // Meant for another process (a parent's variables inherited).
  setenv("WATCHDOG_PID", absl::StrCat(getpid() + 1).c_str(), 1);
  EXPECT_EQ(SystemdWatchdogInterval(), std::nullopt);
  setenv("WATCHDOG_PID", absl::StrCat(getpid()).c_str(), 1);
  EXPECT_EQ(SystemdWatchdogInterval(), absl::Seconds(10));
  unsetenv("WATCHDOG_PID");
  unsetenv("WATCHDOG_USEC");
}

TEST(ProgressCheck, AliveWhileTicksMoveDeadAfterTheLimitWithout) {
  absl::Time t0 = absl::FromUnixSeconds(1000);
  ProgressCheck check(absl::Seconds(10), t0);
  EXPECT_TRUE(check.Alive(0, t0));
  EXPECT_TRUE(check.Alive(0, t0 + absl::Seconds(10)));
  EXPECT_FALSE(check.Alive(0, t0 + absl::Seconds(11))) << "never ticked";
  EXPECT_TRUE(check.Alive(1, t0 + absl::Seconds(12))) << "moves again";
  EXPECT_TRUE(check.Alive(2, t0 + absl::Seconds(20)));
  EXPECT_TRUE(check.Alive(2, t0 + absl::Seconds(29)));
  EXPECT_FALSE(check.Alive(2, t0 + absl::Seconds(31))) << "stuck in tick 2";
}

TEST(Watchdog, PingsWhileTheLoopMovesAndStopsWhenItIsStuck) {
  std::atomic<uint64_t> ticks{0};
  std::atomic<int> pings{0};
  Watchdog watchdog(
      absl::Milliseconds(200), [&] { return ticks.load(); },
      [&] { pings.fetch_add(1); });
  watchdog.Start();
  // A tick every 50ms, for 600ms: a ping about every 50ms.
  for (int i = 0; i < 12; ++i) {
    ticks.fetch_add(1);
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_GE(pings.load(), 6);
  // Stuck: pings stop within the interval (plus a check period).
  absl::SleepFor(absl::Milliseconds(400));
  int stuck = pings.load();
  absl::SleepFor(absl::Milliseconds(400));
  EXPECT_EQ(pings.load(), stuck) << "no ping while the loop is stuck";
  ticks.fetch_add(1);
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_GT(pings.load(), stuck) << "pings again once the loop moves";
  watchdog.Stop();
}

}  // namespace
}  // namespace locus
