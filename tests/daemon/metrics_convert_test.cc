#include "agent/daemon/metrics_convert.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using ::testing::ElementsAre;

// Two nodes (ids 0 and 1, CPUs 0-1 and 2-3), one nginx worker with two
// threads, one NIC queue IRQ.
Snapshot TwoNodeSnapshot() {
  Snapshot s;
  s.tick_ns = 500'000'000;
  s.topology.nodes = {
      {.id = 0, .cpus = {0, 1}, .mem_total_bytes = 100, .distances = {}},
      {.id = 1, .cpus = {2, 3}, .mem_total_bytes = 200, .distances = {}}};
  s.topology.cpu_node = {0, 0, 1, 1};
  s.cpus = {{.cpu = 0, .busy = 0.5},
            {.cpu = 1, .busy = 0.3},
            {.cpu = 2, .busy = 1.0},
            {.cpu = 3, .busy = 0.0}};
  Target t;
  t.pid = 1200;
  t.comm = "nginx";
  t.role = TargetRole::kWorker;
  ThreadSample a;
  a.tid = 1201;
  a.cpu = 3;
  a.allowed_cpus = {0, 1, 2, 3};
  a.migrations = 5;
  a.cross_node_migrations = 2;
  a.faults = {{.local = 10, .remote = 30}, {.local = 60, .remote = 0}};
  ThreadSample b;
  b.tid = 1202;
  b.cpu = 0;
  b.faults = {{.local = 20, .remote = 0}, {.local = 0, .remote = 20}};
  t.threads = {a, b};
  s.targets = {t};
  IrqSample irq;
  irq.irq = 45;
  irq.name = "virtio1-input.0";
  irq.net_device = "eth0";
  irq.device_node = 1;
  irq.affinity = {0, 1};
  irq.effective = {1};
  irq.count_per_cpu = {0, 700, 0, 0};
  s.irqs = {irq};
  return s;
}

TEST(MetricsConvertTest, NodesTasksAndIrqsFromASnapshot) {
  v1::Metrics m;
  FillMetricsFromSnapshot(TwoNodeSnapshot(), 9, 1'700'000'000'250'000'000, &m);
  EXPECT_EQ(m.tick(), 9u);
  EXPECT_EQ(m.time().seconds(), 1'700'000'000);
  EXPECT_EQ(m.time().nanos(), 250'000'000);
  EXPECT_EQ(m.tick_period_ns(), 500'000'000u);

  ASSERT_EQ(m.nodes_size(), 2);
  EXPECT_EQ(m.nodes(0).node(), 0);
  EXPECT_THAT(m.nodes(0).cpus(), ElementsAre(0, 1));
  EXPECT_DOUBLE_EQ(m.nodes(0).cpu_busy(), 0.4);
  EXPECT_EQ(m.nodes(0).faults_local(), 30u);  // on node 0's memory
  EXPECT_EQ(m.nodes(0).faults_remote(), 30u);
  EXPECT_DOUBLE_EQ(m.nodes(0).local_fault_ratio(), 0.5);
  EXPECT_DOUBLE_EQ(m.nodes(1).cpu_busy(), 0.5);
  EXPECT_EQ(m.nodes(1).faults_local(), 60u);
  EXPECT_EQ(m.nodes(1).faults_remote(), 20u);
  EXPECT_DOUBLE_EQ(m.nodes(1).local_fault_ratio(), 0.75);
  EXPECT_EQ(m.nodes(1).mem_total_bytes(), 200u);

  ASSERT_EQ(m.tasks_size(), 2);
  const v1::TaskMetrics& a = m.tasks(0);
  EXPECT_EQ(a.pid(), 1200);
  EXPECT_EQ(a.tid(), 1201);
  EXPECT_EQ(a.comm(), "nginx");
  EXPECT_EQ(a.role(), v1::TASK_ROLE_WORKER);
  EXPECT_EQ(a.cpu(), 3);
  EXPECT_EQ(a.node(), 1);
  EXPECT_THAT(a.allowed_cpus(), ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(a.faults_local(), 70u);
  EXPECT_EQ(a.faults_remote(), 30u);
  EXPECT_EQ(a.migrations(), 5u);
  EXPECT_EQ(a.cross_node_migrations(), 2u);
  EXPECT_EQ(m.tasks(1).node(), 0);

  ASSERT_EQ(m.irqs_size(), 1);
  EXPECT_EQ(m.irqs(0).name(), "virtio1-input.0");
  EXPECT_EQ(m.irqs(0).net_device(), "eth0");
  EXPECT_EQ(m.irqs(0).device_node(), 1);
  EXPECT_THAT(m.irqs(0).cpus(), ElementsAre(0, 1));
  EXPECT_THAT(m.irqs(0).effective_cpus(), ElementsAre(1));
  EXPECT_EQ(m.irqs(0).count(), 700u);
}

TEST(MetricsConvertTest, MemoryTiersGoToTheNodesAndTheHost) {
  Snapshot s = TwoNodeSnapshot();
  s.topology.nodes[0].tier = 4;
  s.topology.nodes[1].tier = 4;
  s.topology.nodes.push_back({.id = 2,
                              .cpus = {},
                              .mem_total_bytes = 300,
                              .distances = {},
                              .tier = 6});
  s.numa_balancing_mode = 2;
  s.tiering.demotion_enabled = 1;
  s.tiering.damon_migrations = {"kdamond 0 scheme 1: migrate_cold to node 2"};
  s.tiering.promoted_total = 7;
  v1::Metrics m;
  FillMetricsFromSnapshot(s, 1, 0, &m);
  ASSERT_EQ(m.nodes_size(), 3);
  EXPECT_EQ(m.nodes(0).tier(), 4);
  EXPECT_FALSE(m.nodes(0).lower_tier());
  EXPECT_EQ(m.nodes(2).tier(), 6);
  EXPECT_TRUE(m.nodes(2).lower_tier());
  const v1::MemoryTiering& t = m.memory_tiering();
  EXPECT_EQ(t.demotion_enabled(), 1);
  EXPECT_EQ(t.numa_balancing_mode(), 2);
  EXPECT_THAT(t.damon_migrations(),
              ElementsAre("kdamond 0 scheme 1: migrate_cold to node 2"));
  EXPECT_EQ(t.promoted_total(), 7);
  EXPECT_EQ(t.demoted_total(), -1);
  // Unknown stays unknown on the wire, not tier 0.
  FillMetricsFromSnapshot(TwoNodeSnapshot(), 2, 0, &m);
  EXPECT_FALSE(m.nodes(0).has_tier());
}

TEST(MetricsConvertTest, EachThreadCarriesItsProcesssMemoryPerNode) {
  Snapshot s = TwoNodeSnapshot();
  s.targets[0].page_size = 4096;
  s.targets[0].resident_pages = {10, 256};
  v1::Metrics m;
  FillMetricsFromSnapshot(s, 1, 0, &m);
  ASSERT_EQ(m.tasks_size(), 2);
  // Bytes, indexed like the nodes; the process's, so on both threads.
  EXPECT_THAT(m.tasks(0).resident_bytes(), ElementsAre(40960, 1 << 20));
  EXPECT_THAT(m.tasks(1).resident_bytes(), ElementsAre(40960, 1 << 20));
  EXPECT_EQ(m.nodes(1).target_resident_bytes(), 1u << 20);
}

TEST(MetricsConvertTest, UnknownCpuAndMissingSamplesDoNotCrash) {
  Snapshot s = TwoNodeSnapshot();
  s.targets[0].threads[0].cpu = -1;
  s.targets[0].threads[1].cpu = 99;
  s.targets[0].threads[1].faults.resize(5);  // more nodes than the topology
  s.cpus.clear();
  v1::Metrics m;
  FillMetricsFromSnapshot(s, 1, 0, &m);
  EXPECT_EQ(m.tasks(0).node(), -1);
  EXPECT_EQ(m.tasks(1).node(), -1);
  EXPECT_EQ(m.nodes(0).cpu_busy(), 0);
}

TEST(MetricsConvertTest, ActionsKeepTheirReasons) {
  Action pin{.op = PinThread{.pid = 1, .tid = 2, .node = 1, .cpus = {2, 3}},
             .reason = "82% remote faults on node 1"};
  v1::Action p = ToAction(pin, 4);
  EXPECT_EQ(p.tick(), 4u);
  EXPECT_EQ(p.reason(), "82% remote faults on node 1");
  ASSERT_TRUE(p.has_pin_thread());
  EXPECT_EQ(p.pin_thread().tid(), 2);
  EXPECT_THAT(p.pin_thread().cpus(), ElementsAre(2, 3));

  v1::Action m = ToAction(Action{.op = MigratePages{.pid = 1,
                                                    .from_node = -1,
                                                    .to_node = 1,
                                                    .max_bytes = 4096},
                                 .reason = ""},
                          4);
  ASSERT_TRUE(m.has_migrate_pages());
  EXPECT_EQ(m.migrate_pages().from_node(), -1);
  EXPECT_EQ(m.migrate_pages().max_bytes(), 4096u);

  v1::Action i = ToAction(
      Action{.op = SetIrqAffinity{.irq = 45, .cpus = {1}}, .reason = ""}, 4);
  ASSERT_TRUE(i.has_set_irq_affinity());
  EXPECT_EQ(i.set_irq_affinity().irq(), 45);
}

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

// The snapshot part is checked above; these check what the tick adds: outcomes,
// moved pages, hold-downs, policy, sensors, drops.
TEST(MetricsConvertTest, CarriesWhatTheTickAdds) {
  MetricsContext context;
  context.sensors.sources.numa = "iter_task";
  context.sensors.numa_active = true;
  context.sensors.drops = {{"a", 2}, {"b", 3}};
  TickReport report = Report();
  report.took = absl::Milliseconds(30);
  report.cpu = absl::Milliseconds(4);
  v1::Metrics m = ToMetrics(report, context);
  EXPECT_EQ(m.tick(), 9u);
  EXPECT_EQ(m.tick_duration_ns(), 30'000'000u);
  EXPECT_EQ(m.tick_cpu_ns(), 4'000'000u);
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

// Status shows when the running policy came into force; before the watcher
// has stamped it, nothing is shown rather than 1970.
TEST(MetricsConvertTest, PolicyCarriesWhenItWasLoaded) {
  TickReport r = Report();
  r.policy.loaded_unix_ns = 1'700'000'000'123'000'000;
  v1::Metrics m = ToMetrics(r, MetricsContext{});
  ASSERT_TRUE(m.policy().has_loaded());
  EXPECT_EQ(m.policy().loaded().seconds(), 1'700'000'000);
  EXPECT_EQ(m.policy().loaded().nanos(), 123'000'000);
  r.policy.loaded_unix_ns = 0;
  EXPECT_FALSE(ToMetrics(r, MetricsContext{}).policy().has_loaded());
}

// Bytes that are not UTF-8 (a rejected policy quoting its own bad bytes, a
// process that named itself so) would make the whole message unparsable for
// every client: they reach the wire escaped, and the message round-trips.
TEST(MetricsConvertTest, TextFromOutsideIsValidUtf8OnTheWire) {
  TickReport r = Report();
  r.policy.is_default = false;
  r.policy.source = "/etc/locus/p\xff.yaml";
  r.policy.last_error = "p.yaml:1:1: unknown key \"\xfe\xff\"";
  auto snapshot = std::make_shared<Snapshot>(TwoNodeSnapshot());
  snapshot->targets[0].comm = "ng\xc3";
  snapshot->irqs[0].name = "q\x80";
  r.snapshot = snapshot;
  r.actions.push_back(
      ActionRecord{Action{PinThread{42, 43, 1, {2}}, "reason \xe2\x86", 0.5},
                   MakeResult(Outcome::kError, "err \xff")});
  v1::Metrics m = ToMetrics(r, MetricsContext{});
  EXPECT_EQ(m.policy().last_error(), "p.yaml:1:1: unknown key \"\\xfe\\xff\"");
  EXPECT_EQ(m.policy().path(), "/etc/locus/p\\xff.yaml");
  EXPECT_EQ(m.tasks(0).comm(), "ng\\xc3");
  EXPECT_EQ(m.irqs(0).name(), "q\\x80");
  EXPECT_EQ(m.actions(2).reason(), "reason \\xe2\\x86");
  EXPECT_EQ(m.actions(2).error(), "err \\xff");
  std::string wire;
  ASSERT_TRUE(m.SerializeToString(&wire));
  v1::Metrics back;
  EXPECT_TRUE(back.ParseFromString(wire));
}

TEST(MetricsConvertTest, ConnectionGroupsJoinThePlanAndTheCounters) {
  TickReport report;
  ListenGroupSteering steer;
  steer.group = "netns 1 0.0.0.0:80";
  steer.nodes = {{0, {11, 12}, 0}, {1, {13}, 150}};
  steer.reason = "new connections to a worker of the node";
  report.plan.connections = {steer};
  SteeringState state;
  state.group = steer.group;
  state.steered = true;
  state.sockets = 3;
  state.total = {{1, {90, 10, 0, 0}}, {-1, {0, 0, 4, 0}}};
  state.tick = {{1, {9, 1, 0, 0}}};
  SteeringState other;
  other.group = "netns 1 0.0.0.0:443";
  other.sockets = 1;
  other.problem = "one socket: nginx listens without reuseport";
  report.connections = {state, other};
  v1::Metrics m = ToMetrics(report, MetricsContext{});
  ASSERT_EQ(m.connections_size(), 2);
  const v1::ConnectionGroup& g = m.connections(0);
  EXPECT_TRUE(g.steered());
  EXPECT_EQ(g.reason(), steer.reason);
  // Nodes of the plan and of the counters, ascending; -1 first.
  ASSERT_EQ(g.nodes_size(), 3);
  EXPECT_EQ(g.nodes(0).node(), -1);
  EXPECT_EQ(g.nodes(0).fell_back_total(), 4u);
  EXPECT_EQ(g.nodes(1).workers(), 2u);
  EXPECT_EQ(g.nodes(1).local_total(), 0u);
  EXPECT_EQ(g.nodes(2).local(), 9u);
  EXPECT_EQ(g.nodes(2).local_total(), 90u);
  EXPECT_EQ(g.nodes(2).spilled_total(), 10u);
  EXPECT_EQ(g.nodes(2).spill_permille(), 150u);
  EXPECT_FALSE(m.connections(1).steered());
  EXPECT_EQ(m.connections(1).problem(),
            "one socket: nginx listens without reuseport");
  EXPECT_EQ(m.connections(1).nodes_size(), 0);
}

}  // namespace
}  // namespace locus

namespace locus {
namespace {

// The soft home's figures: each thread's share of its runtime on its home
// node (Locus's home, else the one node its affinity allows) and the
// targets' run-queue wait per node.
TEST(MetricsConvertTest, HomeTimeAndRunqueueWait) {
  Snapshot s = TwoNodeSnapshot();
  // 1201 ran 100 ms on node 0 and 300 ms on node 1 (its last CPU, 3) and
  // waited 50 ms; 1202, confined to node 0, ran 200 ms there, waited 10 ms.
  s.targets[0].threads[0].runtime_ns = {100'000'000, 300'000'000};
  s.targets[0].threads[0].wait_ns = 50'000'000;
  s.targets[0].threads[1].runtime_ns = {200'000'000, 0};
  s.targets[0].threads[1].allowed_cpus = {0, 1};
  s.targets[0].threads[1].wait_ns = 10'000'000;
  s.cpus[0].busy_all = 0.9;
  s.cpus[1].busy_all = 0.7;
  TickReport report;
  report.snapshot = std::make_shared<const Snapshot>(s);
  v1::Metrics m = ToMetrics(report, MetricsContext{});
  ASSERT_EQ(m.nodes_size(), 2);
  EXPECT_DOUBLE_EQ(m.nodes(0).runqueue_wait_s(), 0.02);  // 10 ms in 500
  EXPECT_DOUBLE_EQ(m.nodes(1).runqueue_wait_s(), 0.1);   // 50 ms in 500
  EXPECT_DOUBLE_EQ(m.nodes(0).cpu_busy_all(), 0.8);
  EXPECT_EQ(m.nodes(1).cpu_busy_all(), -1);  // not read for its CPUs
  ASSERT_EQ(m.tasks_size(), 2);
  // Unconfined and no home of Locus's: no home to be at.
  EXPECT_EQ(m.tasks(0).home_node(), -1);
  EXPECT_EQ(m.tasks(0).home_time_ratio(), -1);
  EXPECT_EQ(m.tasks(0).runqueue_wait_ns(), 50'000'000u);
  EXPECT_EQ(m.tasks(1).home_node(), 0);
  EXPECT_DOUBLE_EQ(m.tasks(1).home_time_ratio(), 1.0);
  EXPECT_EQ(m.tasks(1).spill_node(), -1);

  // Locus made node 0 the worker's home and widened it to node 1.
  report.homes[1200] = {.node = 0, .spill_node = 1};
  m = ToMetrics(report, MetricsContext{});
  EXPECT_EQ(m.tasks(0).home_node(), 0);
  EXPECT_DOUBLE_EQ(m.tasks(0).home_time_ratio(), 0.25);
  EXPECT_EQ(m.tasks(0).spill_node(), 1);
  EXPECT_EQ(m.tasks(0).runtime_ns(), 400'000'000u);
}

}  // namespace
}  // namespace locus
