#include "agent/daemon/sensor_merge.h"

#include "gtest/gtest.h"

namespace locus {
namespace {

// 2 nodes x 1 CPU; one target with one thread, tid 7.
Snapshot Host() {
  Snapshot s;
  s.topology.nodes = {Node{0, {0}, 0, 0, {10, 20}},
                      Node{1, {1}, 0, 0, {20, 10}}};
  s.topology.cpu_node = {0, 1};
  Target t;
  t.pid = 7;
  ThreadSample thread;
  thread.tid = 7;
  thread.cpu = 0;
  t.threads = {thread};
  s.targets = {t};
  return s;
}

TaskCounters Task(uint64_t migrations, uint64_t run0, uint64_t run1,
                  uint64_t fault_node1) {
  TaskCounters c;
  c.tid = 7;
  c.pid = 7;
  c.cpu = 1;
  c.migrations = migrations;
  c.cross_node_migrations = migrations / 2;
  c.runtime_ns = {run0, run1};
  c.net_rx_softirq_ns = migrations * 10;
  c.numa_faults = {NumaNodeFaults{0, 0, 0},
                   NumaNodeFaults{fault_node1, fault_node1 / 4,
                                  fault_node1 - fault_node1 / 4}};
  return c;
}

SensorReading Reading(uint64_t ns, TaskCounters task, uint64_t busy0) {
  SensorReading r;
  r.monotonic_ns = ns;
  r.numa_active = true;
  r.numa_kind = NumaFaultKind::kPagesExact;
  r.tasks = {task};
  r.cpus.resize(2);
  r.cpus[0].cpu = 0;
  r.cpus[0].busy_ns = busy0;
  r.cpus[0].softirq_ns[kSoftirqNetRx] = busy0 / 10;
  r.cpus[1].cpu = 1;
  return r;
}

TEST(SensorMergeTest, FirstSightingIsABaselineThenDeltas) {
  SensorMerge merge;
  Snapshot first = Host();
  merge.Merge(Reading(1'000'000'000, Task(10, 100, 50, 40), 400'000'000),
              &first);
  const ThreadSample& t1 = first.targets[0].threads[0];
  EXPECT_EQ(t1.migrations, 0u);
  EXPECT_EQ(t1.runtime_ns, (PerNode<uint64_t>{0, 0}));
  EXPECT_EQ(t1.cpu, 1) << "the sensor's last CPU wins over /proc's";

  Snapshot second = Host();
  merge.Merge(Reading(2'000'000'000, Task(16, 300, 50, 120), 900'000'000),
              &second);
  const ThreadSample& t2 = second.targets[0].threads[0];
  EXPECT_EQ(t2.migrations, 6u);
  EXPECT_EQ(t2.cross_node_migrations, 3u);
  EXPECT_EQ(t2.net_rx_softirq_ns, 60u);
  EXPECT_EQ(t2.runtime_ns, (PerNode<uint64_t>{200, 0}));
  ASSERT_EQ(t2.faults.size(), 2u);
  EXPECT_EQ(t2.faults[1].local, 30u - 10u);
  EXPECT_EQ(t2.faults[1].remote, 90u - 30u);
  EXPECT_DOUBLE_EQ(second.cpus[0].busy, 0.5);
  EXPECT_EQ(second.cpus[0].softirq_ns[kSoftirqNetRx], 50'000'000u);
}

TEST(SensorMergeTest, FindsTheTargetAmongEveryTaskOnTheHost) {
  SensorMerge merge;
  auto reading = [](uint64_t ns, uint64_t migrations) {
    SensorReading r = Reading(ns, Task(migrations, 0, 0, 0), 0);
    TaskCounters before = r.tasks[0], after = r.tasks[0];
    before.tid = 3;
    before.migrations = 1000;
    after.tid = 9;
    after.migrations = 2000;
    r.tasks = {before, r.tasks[0], after};  // ascending by tid
    return r;
  };
  Snapshot first = Host();
  merge.Merge(reading(1, 10), &first);
  Snapshot second = Host();
  merge.Merge(reading(2, 14), &second);
  EXPECT_EQ(second.targets[0].threads[0].migrations, 4u);
}

TEST(SensorMergeTest, DecayedFaultsAreSplitByWhereTheThreadRuns) {
  SensorMerge merge;
  SensorReading r = Reading(1, Task(0, 0, 0, 0), 0);
  r.numa_kind = NumaFaultKind::kKernelDecayed;
  r.tasks[0].numa_faults = {NumaNodeFaults{5, 0, 0}, NumaNodeFaults{9, 0, 0}};
  Snapshot s = Host();
  merge.Merge(r, &s);
  const ThreadSample& t = s.targets[0].threads[0];
  // Runs on CPU 1 (node 1): node 1's faults are local, node 0's remote.
  EXPECT_EQ(t.faults[0].remote, 5u);
  EXPECT_EQ(t.faults[0].local, 0u);
  EXPECT_EQ(t.faults[1].local, 9u);
}

TEST(SensorMergeTest, InactiveNumaLeavesFaultsEmpty) {
  SensorMerge merge;
  SensorReading r = Reading(1, Task(0, 0, 0, 50), 0);
  r.numa_active = false;
  Snapshot s = Host();
  merge.Merge(r, &s);
  EXPECT_TRUE(s.targets[0].threads[0].faults.empty());
}

TEST(SensorMergeTest, CounterResetStartsAfreshInsteadOfWrapping) {
  SensorMerge merge;
  Snapshot a = Host();
  merge.Merge(Reading(1, Task(100, 0, 0, 0), 0), &a);
  Snapshot b = Host();
  merge.Merge(Reading(2, Task(3, 0, 0, 0), 0), &b);
  EXPECT_EQ(b.targets[0].threads[0].migrations, 0u);
}

}  // namespace
}  // namespace locus
