// Decide() for servers whose workers are threads (targets.thread_workers):
// each thread is a worker of its own, spread and pinned as worker processes
// are; the process's memory, shared by every thread, is never moved.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/decide.h"
#include "policy/default_policy.h"
#include "tests/common/snapshot_builder.h"
#include "tests/policy/plan_view.h"

namespace locus {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using testing::Irqs;
using testing::MakeHost;
using testing::MakeNicIrq;
using testing::MakeWorker;
using testing::NodeCpus;
using testing::Pins;
using testing::Reasons;

constexpr int32_t kProcess = 600;

v1::Policy HaproxyPolicy() {
  v1::Policy policy = DefaultPolicy();
  policy.mutable_targets()->add_comm("haproxy");
  policy.mutable_targets()->add_thread_workers("haproxy");
  return policy;
}

// A worker thread `tid` of HAProxy's process, running on `run_node`,
// confined to `pinned_node` (-1: anywhere), with remote faults on node 0's
// memory whatever node it runs on (the process's shared pages).
Target ThreadWorker(const Snapshot& s, int32_t tid, int run_node,
                    int pinned_node) {
  Target t = MakeWorker(s, tid, run_node, pinned_node, 0);
  t.comm = "haproxy";
  t.process = kProcess;
  t.resident_pages.clear();  // as the scan leaves them: nobody's own
  return t;
}

// Four threads all running on node 0 of a 2-node host: two are pinned to
// node 1, each pin naming its thread and its process; the two that stay
// are home already (a pin would gain them nothing).
TEST(ThreadWorkersTest, ThreadsOfOneProcessAreSpreadOverTheNodes) {
  Snapshot s = MakeHost(2, 2);
  for (int32_t tid : {600, 601, 602, 603}) {
    s.targets.push_back(ThreadWorker(s, tid, 0, -1));
  }
  const Plan plan = Decide(s, HaproxyPolicy(), History());
  const std::vector<PinThread> pins = Pins(plan);
  ASSERT_EQ(pins.size(), 2u) << Reasons(plan);
  std::set<int32_t> tids;
  for (const PinThread& pin : pins) {
    EXPECT_EQ(pin.pid, kProcess);
    EXPECT_TRUE(pin.thread_worker);
    EXPECT_EQ(WorkerOf(pin), pin.tid);
    EXPECT_EQ(pin.node, 1);
    EXPECT_EQ(pin.cpus, NodeCpus(s, 1));
    tids.insert(pin.tid);
  }
  EXPECT_EQ(tids.size(), 2u) << "one pin per thread";
  EXPECT_THAT(plan.actions[0].reason, HasSubstr("worker thread 60"));
  EXPECT_THAT(plan.actions[0].reason, HasSubstr("(haproxy 600)"));
}

// Threads already home, whose faults are mostly on the other node's memory
// (pages the process allocated there): no page is moved for any of them.
TEST(ThreadWorkersTest, NoPageOfTheSharedProcessIsMoved) {
  Snapshot s = MakeHost(2, 2);
  s.targets.push_back(ThreadWorker(s, 600, 0, 0));
  s.targets.push_back(ThreadWorker(s, 601, 1, 1));
  Target with_pages = ThreadWorker(s, 602, 1, 1);
  with_pages.resident_pages = {25'600, 0};  // even if a scan gave it pages
  s.targets.push_back(with_pages);
  const Plan plan = Decide(s, HaproxyPolicy(), History());
  for (const Action& a : plan.actions) {
    EXPECT_FALSE(std::holds_alternative<MigratePages>(a.op)) << a.reason;
  }
}

// The history of a thread worker is the thread's: its dwell keeps it, and
// its siblings are free to move.
TEST(ThreadWorkersTest, EachThreadDwellsOnItsOwn) {
  Snapshot s = MakeHost(2, 2);
  s.now_ns = 10 * testing::kSecond;
  for (int32_t tid : {600, 601}) {
    s.targets.push_back(ThreadWorker(s, tid, 0, -1));
  }
  History history;
  Action pinned;
  pinned.op = PinThread{.pid = kProcess,
                        .tid = 601,
                        .node = 0,
                        .cpus = NodeCpus(s, 0),
                        .thread_worker = true};
  RecordApplied(history, pinned, s.topology, 5 * testing::kSecond);
  EXPECT_NE(history.Find({EntityKind::kTask, 601}), nullptr);
  EXPECT_EQ(history.Find({EntityKind::kTask, kProcess}), nullptr);
  const Plan plan = Decide(s, HaproxyPolicy(), history);
  // 601 keeps the home its history gives it (node 0, where it runs): 600,
  // not 601, leaves for node 1. Kept by the process, the history would
  // have held 600 and sent 601.
  const std::vector<PinThread> pins = Pins(plan);
  ASSERT_EQ(pins.size(), 1u) << Reasons(plan);
  EXPECT_EQ(pins[0].tid, 600);
  EXPECT_EQ(pins[0].node, 1);
}

// nginx and HAProxy on one host, all on node 0: each server spreads over
// the nodes, nginx by its worker processes and HAProxy by its threads.
TEST(ThreadWorkersTest, AMixedHostSpreadsEachServer) {
  Snapshot s = MakeHost(2, 2);
  s.targets.push_back(MakeWorker(s, 100, 0, -1, 0));
  s.targets.push_back(MakeWorker(s, 101, 0, -1, 0));
  for (int32_t tid : {600, 601}) {
    s.targets.push_back(ThreadWorker(s, tid, 0, -1));
  }
  const Plan plan = Decide(s, HaproxyPolicy(), History());
  std::map<int32_t, int> node_of;
  for (const PinThread& pin : Pins(plan)) node_of[WorkerOf(pin)] = pin.node;
  ASSERT_EQ(node_of.size(), 2u) << Reasons(plan);
  EXPECT_EQ(node_of.count(100) + node_of.count(101), 1u) << Reasons(plan);
  EXPECT_EQ(node_of.count(600) + node_of.count(601), 1u) << Reasons(plan);
  for (const auto& [worker, node] : node_of) EXPECT_EQ(node, 1) << worker;
}

// HAProxy in a cgroup whose cpuset allows nodes 1 and 2 of a 4-node host
// (CPUs and memory): its threads, all running on node 1, are spread over
// those two only, two per node, never to nodes 0 or 3.
TEST(ThreadWorkersTest, ACpusetBoundsTheThreadsNodes) {
  Snapshot s = MakeHost(4, 2);
  auto pod = std::make_shared<CgroupCpuset>(CgroupCpuset{
      .path = "/system.slice/haproxy.service",
      .cpus = {2, 3, 4, 5},
      .mems = {1, 2},
      .placed_by = "",
  });
  for (int32_t tid : {600, 601, 602, 603}) {
    Target t = ThreadWorker(s, tid, 1, -1);
    t.threads[0].allowed_cpus = pod->cpus;
    t.cgroup = pod;
    s.targets.push_back(t);
  }
  const Plan plan = Decide(s, HaproxyPolicy(), History());
  const std::vector<PinThread> pins = Pins(plan);
  ASSERT_EQ(pins.size(), 2u) << Reasons(plan);
  for (const PinThread& pin : pins) {
    EXPECT_EQ(pin.node, 2) << Reasons(plan);
    EXPECT_EQ(pin.cpus, NodeCpus(s, 2));
  }
}

// The NIC queue whose traffic the worker threads consume follows them:
// both threads confined to node 1 with all the NET_RX (placement off: they
// stay there), the queue's IRQ on node 0 goes to node 1.
TEST(ThreadWorkersTest, TheirNicQueueFollowsTheThreads) {
  Snapshot s = MakeHost(2, 2);
  for (int32_t tid : {600, 601}) {
    Target t = ThreadWorker(s, tid, 1, 1);
    t.threads[0].net_rx_softirq_ns = 20'000'000;
    s.targets.push_back(t);
  }
  s.irqs.push_back(MakeNicIrq(s, 40, "eth0", 0, 0, {0}));
  v1::Policy policy = HaproxyPolicy();
  policy.mutable_placement()->set_enabled(false);
  const Plan plan = Decide(s, policy, History());
  ASSERT_EQ(Irqs(plan).size(), 1u) << Reasons(plan);
  EXPECT_EQ(Irqs(plan)[0].irq, 40);
  EXPECT_THAT(NodeCpus(s, 1), Contains(Irqs(plan)[0].cpus[0]));
  EXPECT_THAT(plan.actions[0].reason, HasSubstr("its consumers on node 1"));
}

// HAProxy's `shards by-thread`: a socket per thread, owned by the thread
// that accepts on it (inode 1000 + tid).
ListenGroupSample ShardedGroup(const std::vector<int32_t>& tids) {
  ListenGroupSample group;
  group.name = "netns 1 0.0.0.0:80";
  group.port = 80;
  group.thread_workers = true;
  for (int32_t tid : tids) {
    group.sockets.push_back(
        {.inode = 1000 + static_cast<uint64_t>(tid), .owner_pid = tid});
  }
  return group;
}

// Each thread's socket takes the connections of the node the thread is
// homed on this tick: two threads pinned to node 1 by the plan, two left
// home on node 0.
TEST(ThreadWorkersTest, EachThreadsSocketServesItsNode) {
  Snapshot s = MakeHost(2, 2);
  for (int32_t tid : {600, 601, 602, 603}) {
    s.targets.push_back(ThreadWorker(s, tid, 0, -1));
  }
  s.listen_groups.push_back(ShardedGroup({600, 601, 602, 603}));
  const Plan plan = Decide(s, HaproxyPolicy(), History());
  std::set<uint64_t> pinned_to_1;
  for (const PinThread& pin : Pins(plan)) pinned_to_1.insert(1000 + pin.tid);
  ASSERT_EQ(pinned_to_1.size(), 2u) << Reasons(plan);
  ASSERT_EQ(plan.connections.size(), 1u) << Reasons(plan);
  const ListenGroupSteering& steer = plan.connections[0];
  ASSERT_EQ(steer.nodes.size(), 2u);
  EXPECT_EQ(std::set<uint64_t>(steer.nodes[1].inodes.begin(),
                               steer.nodes[1].inodes.end()),
            pinned_to_1);
  ASSERT_EQ(steer.nodes[0].inodes.size(), 2u);
  for (uint64_t inode : steer.nodes[0].inodes) {
    EXPECT_FALSE(pinned_to_1.contains(inode)) << inode;
  }
}

// One socket every thread accepts on (`shards 1`, or no shards): nothing
// to choose between, and the note names the bind line's fix; a group with
// a shared socket among owned ones steers the owned and says so.
TEST(ThreadWorkersTest, SharedSocketsGetTheBindLineToChange) {
  Snapshot s = MakeHost(2, 2);
  for (int32_t tid : {600, 601}) {
    s.targets.push_back(ThreadWorker(s, tid, 0, -1));
  }
  ListenGroupSample one = ShardedGroup({});
  one.sockets.push_back({.inode = 900, .owner_pid = 0, .shared = true});
  s.listen_groups.push_back(one);
  Plan plan = Decide(s, HaproxyPolicy(), History());
  EXPECT_TRUE(plan.connections.empty());
  EXPECT_THAT(plan.notes,
              Contains(AllOf(HasSubstr("worker threads share one listening "
                                       "socket on netns 1 0.0.0.0:80"),
                             HasSubstr("`shards by-thread`"))));

  s.listen_groups = {ShardedGroup({600, 601})};
  s.listen_groups[0].sockets.push_back(
      {.inode = 900, .owner_pid = 0, .shared = true});
  plan = Decide(s, HaproxyPolicy(), History());
  ASSERT_EQ(plan.connections.size(), 1u);
  EXPECT_THAT(plan.connections[0].reason,
              HasSubstr("1 socket(s) of no placed worker"));
  EXPECT_THAT(plan.notes,
              Contains(AllOf(HasSubstr("1 socket(s) on netns 1 0.0.0.0:80 "
                                       "are accepted on by several worker "
                                       "threads"),
                             HasSubstr("`shards by-thread`"))));
}

}  // namespace
}  // namespace locus
