#include "agent/api/metrics_hub.h"

#include <string>
#include <thread>
#include <vector>

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

// A reader that fell behind gets the freshest tick at once, with every tick
// it missed counted, rather than the older ticks still queued.
TEST(MetricsHub, FullQueueSkipsToTheFreshestAndReportsInBand) {
  MetricsHub hub(MetricsHubOptions{.queue_depth = 4});
  auto sub = hub.Subscribe();
  ASSERT_TRUE(sub.ok());
  for (uint64_t t = 1; t <= 10; ++t) hub.Publish(Tick(t));
  EXPECT_EQ((*sub)->dropped_total(), 6u);

  auto first = (*sub)->Next(absl::Seconds(1));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->tick(), 10u);
  EXPECT_EQ(first->drops().subscriber_dropped(), 9u);
  EXPECT_EQ(first->drops().subscriber_dropped_total(), 9u);
  EXPECT_FALSE((*sub)->Next(absl::ZeroDuration()).has_value());

  // Without a loss, what is queued is delivered in order.
  hub.Publish(Tick(11));
  hub.Publish(Tick(12));
  for (uint64_t t = 11; t <= 12; ++t) {
    auto m = (*sub)->Next(absl::Seconds(1));
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->tick(), t);
    EXPECT_EQ(m->drops().subscriber_dropped(), 0u);  // already reported
    EXPECT_EQ(m->drops().subscriber_dropped_total(), 9u);
  }
  for (uint64_t t = 13; t <= 17; ++t) hub.Publish(Tick(t));
  auto m = (*sub)->Next(absl::Seconds(1));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->tick(), 17u);
  EXPECT_EQ(m->drops().subscriber_dropped(), 4u);
  EXPECT_EQ(m->drops().subscriber_dropped_total(), 13u);
}

TEST(MetricsHub, StuckSubscriberNeitherBlocksPublisherNorOthers) {
  MetricsHub hub(MetricsHubOptions{.queue_depth = 4, .stall_ticks = 0});
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
  EXPECT_EQ(ma->tick(), 4u);  // behind: skipped to the freshest
  EXPECT_EQ(ma->drops().subscriber_dropped(), 3u);
  EXPECT_EQ(mb->tick(), 4u);  // nothing from before it subscribed
  EXPECT_EQ(mb->drops().subscriber_dropped(), 0u);
}

TEST(MetricsHub, LimitsSubscribersAndFreesSlots) {
  MetricsHub hub(
      MetricsHubOptions{.max_subscribers = 2, .privileged_reserve = 0});
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

SubscriberInfo Peer(std::string peer, bool privileged = false,
                    bool root = false) {
  SubscriberInfo info;
  info.peer = std::move(peer);
  info.privileged = privileged;
  info.root = root;
  return info;
}

// Readers from many peers cannot take the reserved slots; the socket's group
// can, and root gets in even when every slot is taken.
TEST(MetricsHub, ReservesSlotsForPrivilegedPeersAndRootAlwaysGetsIn) {
  MetricsHub hub(MetricsHubOptions{
      .max_subscribers = 6, .privileged_reserve = 2, .max_per_peer = 4});
  std::vector<std::unique_ptr<MetricsSubscription>> held;
  for (int i = 0; i < 4; ++i) {
    auto s = hub.Subscribe(Peer("tcp 10.0.0." + std::to_string(i)));
    ASSERT_TRUE(s.ok()) << i;
    held.push_back(*std::move(s));
  }
  auto refused = hub.Subscribe(Peer("tcp 10.0.0.9"));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("kept for root"), std::string::npos)
      << refused.status();
  for (int i = 0; i < 2; ++i) {
    auto s = hub.Subscribe(Peer("uid 1000", /*privileged=*/true));
    ASSERT_TRUE(s.ok()) << i;
    held.push_back(*std::move(s));
  }
  EXPECT_EQ(hub.Subscribe(Peer("uid 1001", true)).status().code(),
            absl::StatusCode::kResourceExhausted);

  // Every slot taken: root's stream gets in, the longest-stalled other one
  // (a reader that took nothing) is dropped, told why, and its slot freed.
  int woken = 0;
  SubscriberInfo victim_info = Peer("tcp 10.0.0.7");
  victim_info.on_dropped = [&woken] { ++woken; };
  hub.Publish(Tick(1));
  for (auto& s : held) ASSERT_TRUE(s->Next(absl::Seconds(1)).has_value());
  held[0].reset();
  auto victim = hub.Subscribe(std::move(victim_info));
  ASSERT_TRUE(victim.ok());
  hub.Publish(Tick(2));
  for (size_t i = 1; i < held.size(); ++i) {
    ASSERT_TRUE(held[i]->Next(absl::Seconds(1)).has_value());
  }
  auto root = hub.Subscribe(Peer("uid 0", true, true));
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(woken, 1);
  EXPECT_TRUE((*victim)->closed());
  EXPECT_EQ((*victim)->dropped_reason().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(hub.subscriber_count(), 6u);
  EXPECT_EQ(hub.dropped_subscribers(), 1u);
}

TEST(MetricsHub, CapsSlotsPerPeerButNotForRoot) {
  MetricsHub hub(MetricsHubOptions{.max_subscribers = 10, .max_per_peer = 2});
  auto a = hub.Subscribe(Peer("uid 1000", true));
  auto b = hub.Subscribe(Peer("uid 1000", true));
  ASSERT_TRUE(a.ok() && b.ok());
  auto c = hub.Subscribe(Peer("uid 1000", true));
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(c.status().message().find("uid 1000 already holds 2"),
            std::string::npos)
      << c.status();
  EXPECT_TRUE(hub.Subscribe(Peer("uid 1001", true)).ok());
  std::vector<std::unique_ptr<MetricsSubscription>> roots;
  for (int i = 0; i < 3; ++i) {
    auto r = hub.Subscribe(Peer("uid 0", true, true));
    ASSERT_TRUE(r.ok()) << i;
    roots.push_back(*std::move(r));
  }
}

// A subscriber that takes nothing (its client stopped reading, or never
// opens its flow-control window) loses its slot after stall_ticks; one that
// reads, however slowly, keeps it.
TEST(MetricsHub, DropsASubscriberThatReadsNothingForStallTicks) {
  MetricsHub hub(MetricsHubOptions{.queue_depth = 4, .stall_ticks = 5});
  int woken = 0;
  SubscriberInfo info = Peer("uid 1000");
  info.on_dropped = [&woken] { ++woken; };
  auto stuck = hub.Subscribe(std::move(info));
  auto slow = hub.Subscribe(Peer("uid 1001"));
  ASSERT_TRUE(stuck.ok() && slow.ok());
  for (uint64_t t = 1; t <= 4; ++t) hub.Publish(Tick(t));
  EXPECT_EQ(hub.subscriber_count(), 2u);
  EXPECT_TRUE((*slow)->Next(absl::Seconds(1)).has_value());
  hub.Publish(Tick(5));  // the fifth tick `stuck` took nothing
  EXPECT_EQ(woken, 1);
  EXPECT_EQ(hub.subscriber_count(), 1u);
  EXPECT_TRUE((*stuck)->closed());
  EXPECT_FALSE((*stuck)->Next(absl::ZeroDuration()).has_value());
  EXPECT_NE((*stuck)->dropped_reason().message().find("read nothing for 5"),
            std::string::npos);
  for (uint64_t t = 6; t <= 20; ++t) {
    hub.Publish(Tick(t));
    if (t % 4 == 0) {
      ASSERT_TRUE((*slow)->Next(absl::Seconds(1)).has_value());
    }
  }
  EXPECT_EQ(hub.subscriber_count(), 1u);
  EXPECT_EQ(hub.dropped_subscribers(), 1u);
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
