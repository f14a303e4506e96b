#include "agent/daemon/metrics_convert.h"

#include "gtest/gtest.h"

namespace locus {
namespace {

TickReport Report() {
  auto s = std::make_shared<Snapshot>();
  s->topology.nodes = {Node{0, {0, 1}, 100, 50, {10, 20}},
                       Node{1, {2, 3}, 100, 40, {20, 10}}};
  s->topology.cpu_node = {0, 0, 1, 1};
  s->cpus.resize(4);
  Target t;
  t.pid = 42;
  t.comm = "nginx";
  t.role = TargetRole::kWorker;
  ThreadSample th;
  th.tid = 43;
  th.cpu = 2;
  t.threads = {th};
  s->targets = {t};
  IrqSample irq;
  irq.irq = 30;
  irq.name = "virtio1-input.0";
  irq.count_per_cpu = {1, 2, 3, 4};
  s->irqs = {irq};

  TickReport r;
  r.tick = 9;
  r.snapshot = s;
  r.mode = v1::Policy::MODE_DRY_RUN;
  ActionResult result = MakeResult(Outcome::kApplied, "");
  result.pages_moved = 256;
  result.bytes_moved = 1 << 20;
  r.actions.push_back(ActionRecord{
      Action{MigratePages{42, 0, 1, 4 << 20}, "remote faults", 0.3}, result});
  r.actions.push_back(ActionRecord{Action{SetIrqAffinity{30, {2}}, "irq", 0.5},
                                   MakeResult(Outcome::kGone, "ENOENT")});
  r.held_down = {EntityKey{EntityKind::kIrq, 30}};
  r.policy.version = 3;
  r.policy.last_error = "p.yaml:2:3: bad";
  return r;
}

// The snapshot part is metrics_builder's (tests/agent); these check what the
// tick adds: outcomes, moved pages, hold-downs, policy, sensors, drops.
TEST(MetricsConvertTest, CarriesWhatTheTickAdds) {
  MetricsContext context;
  context.sensors.sources.numa = "iter_task";
  context.sensors.numa_active = true;
  context.sensors.drops = {{"a", 2}, {"b", 3}};
  v1::Metrics m = ToMetrics(Report(), context);
  EXPECT_EQ(m.tick(), 9u);
  EXPECT_EQ(m.mode(), v1::AGENT_MODE_DRY_RUN);
  ASSERT_EQ(m.nodes_size(), 2);
  EXPECT_EQ(m.nodes(0).pages_migrated(), 0u);
  EXPECT_EQ(m.nodes(1).pages_migrated(), 256u);
  ASSERT_EQ(m.tasks_size(), 1);
  ASSERT_EQ(m.irqs_size(), 1);
  EXPECT_TRUE(m.irqs(0).held_down());
  EXPECT_FALSE(m.tasks(0).held_down());
  ASSERT_EQ(m.actions_size(), 2);
  EXPECT_EQ(m.actions(0).migrate_pages().moved_bytes(), 1u << 20);
  EXPECT_EQ(m.actions(1).outcome(), v1::ACTION_OUTCOME_IRQ_GONE);
  EXPECT_EQ(m.actions(1).error(), "ENOENT");
  EXPECT_EQ(m.policy().last_error(), "p.yaml:2:3: bad");
  EXPECT_EQ(m.drops().sensor_events_dropped_total(), 5u);
  ASSERT_EQ(m.sensors_size(), 3);
  EXPECT_EQ(m.sensors(1).source(), "iter_task");
  EXPECT_TRUE(m.sensors(1).ok());
  EXPECT_FALSE(m.sensors(0).ok()) << "source none";
}

// An action that found its entity already where it wanted it changed
// nothing: the stream says so, and a client counting moves does not count it.
TEST(MetricsConvertTest, UnchangedIsNotApplied) {
  TickReport r = Report();
  r.actions.push_back(ActionRecord{
      Action{SetIrqAffinity{30, {1}}, "consumers on node 0", 0.5},
      MakeResult(Outcome::kUnchanged, "irq 30: already on cpus 1")});
  v1::Metrics m = ToMetrics(r, MetricsContext{});
  ASSERT_EQ(m.actions_size(), 3);
  EXPECT_EQ(m.actions(2).outcome(), v1::ACTION_OUTCOME_UNCHANGED);
}

// A change refused because the journal cannot be written is not a failure
// of the change itself: it has its own outcome, and says why.
TEST(MetricsConvertTest, RefusedActionsSayWhy) {
  TickReport r = Report();
  r.actions.push_back(ActionRecord{
      Action{PinThread{42, 43, 1, {2, 3}}, "run off node", 0.5},
      MakeResult(Outcome::kRefused,
                 "thread 43 (pid 42): journal not writable, not acting: "
                 "/j: Read-only file system")});
  v1::Metrics m = ToMetrics(r, MetricsContext{});
  ASSERT_EQ(m.actions_size(), 3);
  EXPECT_EQ(m.actions(2).outcome(), v1::ACTION_OUTCOME_REFUSED);
  EXPECT_EQ(m.actions(2).error(),
            "thread 43 (pid 42): journal not writable, not acting: /j: "
            "Read-only file system");
}

TEST(MetricsConvertTest, FailedCollectionStillReportsTheTick) {
  TickReport r = Report();
  r.snapshot = nullptr;
  v1::Metrics m = ToMetrics(r, MetricsContext{});
  EXPECT_EQ(m.tick(), 9u);
  EXPECT_EQ(m.nodes_size(), 0);
  EXPECT_EQ(m.actions_size(), 2);
}

}  // namespace
}  // namespace locus
