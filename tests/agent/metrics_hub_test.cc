#include "agent/api/metrics_hub.h"

#include <thread>

#include "gtest/gtest.h"

namespace locus {
namespace {

v1::Metrics Tick(uint64_t tick) {
  v1::Metrics m;
  m.set_tick(tick);
  return m;
}

TEST(MetricsHub, DeliversInOrderWithoutDrops) {
  MetricsHub hub;
  auto sub = hub.Subscribe();
  ASSERT_TRUE(sub.ok());
  for (uint64_t t = 1; t <= 3; ++t) {
    hub.Publish(Tick(t));
    auto m = (*sub)->Next(absl::Seconds(1));
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->tick(), t);
    EXPECT_EQ(m->drops().subscriber_dropped(), 0u);
    EXPECT_EQ(m->drops().subscriber_dropped_total(), 0u);
  }
  EXPECT_EQ(hub.published(), 3u);
}

TEST(MetricsHub, FullQueueDropsOldestAndReportsInBand) {
  MetricsHub hub(MetricsHubOptions{.queue_depth = 4});
  auto sub = hub.Subscribe();
  ASSERT_TRUE(sub.ok());
  for (uint64_t t = 1; t <= 10; ++t) hub.Publish(Tick(t));
  EXPECT_EQ((*sub)->dropped_total(), 6u);

  auto first = (*sub)->Next(absl::Seconds(1));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->tick(), 7u);  // the freshest four survive
  EXPECT_EQ(first->drops().subscriber_dropped(), 6u);
  EXPECT_EQ(first->drops().subscriber_dropped_total(), 6u);
  for (uint64_t t = 8; t <= 10; ++t) {
    auto m = (*sub)->Next(absl::Seconds(1));
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->tick(), t);
    EXPECT_EQ(m->drops().subscriber_dropped(), 0u);  // already reported
    EXPECT_EQ(m->drops().subscriber_dropped_total(), 6u);
  }
  hub.Publish(Tick(11));
  hub.Publish(Tick(12));
  hub.Publish(Tick(13));
  hub.Publish(Tick(14));
  hub.Publish(Tick(15));
  auto m = (*sub)->Next(absl::Seconds(1));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->tick(), 12u);
  EXPECT_EQ(m->drops().subscriber_dropped(), 1u);
  EXPECT_EQ(m->drops().subscriber_dropped_total(), 7u);
}

TEST(MetricsHub, StuckSubscriberNeitherBlocksPublisherNorOthers) {
  MetricsHub hub(MetricsHubOptions{.queue_depth = 4});
  auto stuck = hub.Subscribe();  // never reads
  auto reader = hub.Subscribe();
  ASSERT_TRUE(stuck.ok());
  ASSERT_TRUE(reader.ok());
  constexpr int kTicks = 20000;
  absl::Duration longest;
  for (int t = 1; t <= kTicks; ++t) {
    absl::Time start = absl::Now();
    hub.Publish(Tick(t));
    longest = std::max(longest, absl::Now() - start);
    auto m = (*reader)->Next(absl::ZeroDuration());
    ASSERT_TRUE(m.has_value());
    ASSERT_EQ(m->tick(), static_cast<uint64_t>(t));
    ASSERT_EQ(m->drops().subscriber_dropped_total(), 0u);
  }
  EXPECT_EQ((*stuck)->dropped_total(), static_cast<uint64_t>(kTicks - 4));
  // Publishing is a lock and a pointer copy per subscriber: even on a busy
  // shared machine no single call comes near a tick.
  EXPECT_LT(longest, absl::Milliseconds(50));
}

TEST(MetricsHub, EachSubscriberGetsItsOwnDropCount) {
  MetricsHub hub(MetricsHubOptions{.queue_depth = 2});
  auto a = hub.Subscribe();
  ASSERT_TRUE(a.ok());
  hub.Publish(Tick(1));
  hub.Publish(Tick(2));
  hub.Publish(Tick(3));  // a drops tick 1
  auto b = hub.Subscribe();
  ASSERT_TRUE(b.ok());
  hub.Publish(Tick(4));  // a drops tick 2; b has only tick 4
  auto ma = (*a)->Next(absl::Seconds(1));
  auto mb = (*b)->Next(absl::Seconds(1));
  ASSERT_TRUE(ma.has_value());
  ASSERT_TRUE(mb.has_value());
  EXPECT_EQ(ma->tick(), 3u);
  EXPECT_EQ(ma->drops().subscriber_dropped(), 2u);
  EXPECT_EQ(mb->tick(), 4u);  // nothing from before it subscribed
  EXPECT_EQ(mb->drops().subscriber_dropped(), 0u);
}

TEST(MetricsHub, LimitsSubscribersAndFreesSlots) {
  MetricsHub hub(MetricsHubOptions{.max_subscribers = 2});
  auto a = hub.Subscribe();
  auto b = hub.Subscribe();
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  auto c = hub.Subscribe();
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(hub.subscriber_count(), 2u);
  a->reset();
  EXPECT_EQ(hub.subscriber_count(), 1u);
  EXPECT_TRUE(hub.Subscribe().ok());
}

TEST(MetricsHub, NextTimesOutWhenNothingIsPublished) {
  MetricsHub hub;
  auto sub = hub.Subscribe();
  ASSERT_TRUE(sub.ok());
  absl::Time start = absl::Now();
  EXPECT_FALSE((*sub)->Next(absl::Milliseconds(50)).has_value());
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(45));
  EXPECT_FALSE((*sub)->closed());
}

TEST(MetricsHub, CloseDrainsThenWakesWaiters) {
  MetricsHub hub;
  auto sub = hub.Subscribe();
  ASSERT_TRUE(sub.ok());
  hub.Publish(Tick(1));
  hub.Close();
  auto m = (*sub)->Next(absl::Seconds(1));
  ASSERT_TRUE(m.has_value());  // what was queued is still delivered
  EXPECT_EQ(m->tick(), 1u);
  EXPECT_TRUE((*sub)->closed());
  absl::Time start = absl::Now();
  EXPECT_FALSE((*sub)->Next(absl::Seconds(10)).has_value());
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  hub.Publish(Tick(2));  // ignored after close
  EXPECT_EQ(hub.published(), 1u);
  EXPECT_EQ(hub.Subscribe().status().code(), absl::StatusCode::kUnavailable);
}

TEST(MetricsHub, CloseWakesABlockedReaderThread) {
  MetricsHub hub;
  auto sub = hub.Subscribe();
  ASSERT_TRUE(sub.ok());
  absl::Duration waited;
  std::thread reader([&] {
    absl::Time start = absl::Now();
    (*sub)->Next(absl::Seconds(30));
    waited = absl::Now() - start;
  });
  absl::SleepFor(absl::Milliseconds(50));
  hub.Close();
  reader.join();
  EXPECT_LT(waited, absl::Seconds(5));
}

}  // namespace
}  // namespace locus
