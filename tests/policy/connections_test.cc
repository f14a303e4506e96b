// Decide()'s connection steering: which node each worker's socket serves,
// spill from a busy node, and what it refuses to steer.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/decide.h"
#include "policy/default_policy.h"
#include "tests/common/snapshot_builder.h"

namespace locus {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::MakeHost;
using testing::MakeWorker;

// A group on port 80 with one socket per worker pid (inode = 1000 + pid).
ListenGroupSample Group(const std::vector<int>& pids, uint16_t port = 80) {
  ListenGroupSample group;
  group.name = "netns 1 0.0.0.0:" + std::to_string(port);
  group.port = port;
  for (int pid : pids) {
    group.sockets.push_back(
        {.inode = 1000 + static_cast<uint64_t>(pid), .owner_pid = pid});
  }
  return group;
}

// Two workers confined to each node of a 2-node host: already home.
Snapshot PlacedHost() {
  Snapshot s = MakeHost(2, 4);
  s.targets.push_back(MakeWorker(s, 10, 0, 0, 0));
  s.targets.push_back(MakeWorker(s, 11, 0, 0, 0));
  s.targets.push_back(MakeWorker(s, 20, 1, 1, 1));
  s.targets.push_back(MakeWorker(s, 21, 1, 1, 1));
  s.listen_groups.push_back(Group({10, 11, 20, 21}));
  return s;
}

const NodeSteering& NodeOf(const ListenGroupSteering& steer, int node) {
  for (const NodeSteering& n : steer.nodes) {
    if (n.node == node) return n;
  }
  ADD_FAILURE() << "no node " << node;
  static const NodeSteering none;
  return none;
}

TEST(DecideConnectionsTest, EachWorkersSocketServesItsNode) {
  const Plan plan = Decide(PlacedHost(), DefaultPolicy(), History{});
  ASSERT_EQ(plan.connections.size(), 1u);
  const ListenGroupSteering& steer = plan.connections[0];
  EXPECT_EQ(steer.group, "netns 1 0.0.0.0:80");
  EXPECT_THAT(NodeOf(steer, 0).inodes, ElementsAre(1010, 1011));
  EXPECT_THAT(NodeOf(steer, 1).inodes, ElementsAre(1020, 1021));
  EXPECT_EQ(NodeOf(steer, 0).spill_permille, 0u);
  EXPECT_THAT(steer.reason, HasSubstr("node 0: 2 workers"));
}

TEST(DecideConnectionsTest, AWorkerPinnedThisTickTakesItsSocketAlong) {
  Snapshot s = MakeHost(2, 4);
  // Three workers confined to node 0, one on node 1: spread moves one of
  // node 0's to node 1 this tick, and its socket serves node 1 at once.
  for (int pid : {10, 11, 12}) s.targets.push_back(MakeWorker(s, pid, 0, 0, 0));
  s.targets.push_back(MakeWorker(s, 20, 1, 1, 1));
  s.listen_groups.push_back(Group({10, 11, 12, 20}));
  const Plan plan = Decide(s, DefaultPolicy(), History{});
  int moved = 0;
  for (const Action& a : plan.actions) {
    if (const auto* pin = std::get_if<PinThread>(&a.op); pin && pin->node == 1)
      moved = pin->pid;
  }
  ASSERT_NE(moved, 0);
  ASSERT_EQ(plan.connections.size(), 1u);
  EXPECT_THAT(NodeOf(plan.connections[0], 1).inodes,
              ::testing::UnorderedElementsAre(1020, 1000 + moved));
  EXPECT_EQ(NodeOf(plan.connections[0], 0).inodes.size(), 2u);
}

TEST(DecideConnectionsTest, ASocketOfNoWorkerIsLeftToTheHash) {
  Snapshot s = PlacedHost();
  s.listen_groups[0].sockets.push_back({.inode = 5000, .owner_pid = 0});
  const Plan plan = Decide(s, DefaultPolicy(), History{});
  ASSERT_EQ(plan.connections.size(), 1u);
  for (const NodeSteering& n : plan.connections[0].nodes) {
    EXPECT_THAT(n.inodes, ::testing::Not(::testing::Contains(5000u)));
  }
  EXPECT_THAT(plan.connections[0].reason,
              HasSubstr("1 socket(s) of no placed"));
}

TEST(DecideConnectionsTest, WithoutReuseportSaysHowToGetIt) {
  Snapshot s = PlacedHost();
  s.listen_groups = {Group({10})};
  const Plan plan = Decide(s, DefaultPolicy(), History{});
  EXPECT_THAT(plan.connections, IsEmpty());
  EXPECT_THAT(plan.notes,
              Contains(HasSubstr("listens without reuseport on netns 1 "
                                 "0.0.0.0:80; add `reuseport`")));
}

TEST(DecideConnectionsTest, DisabledOrOtherPortsAreNotSteered) {
  v1::Policy policy = DefaultPolicy();
  policy.mutable_connections()->set_enabled(false);
  EXPECT_THAT(Decide(PlacedHost(), policy, History{}).connections, IsEmpty());

  policy = DefaultPolicy();
  policy.mutable_connections()->add_ports(443);
  EXPECT_THAT(Decide(PlacedHost(), policy, History{}).connections, IsEmpty());
  policy.mutable_connections()->add_ports(80);
  EXPECT_EQ(Decide(PlacedHost(), policy, History{}).connections.size(), 1u);
}

TEST(DecideConnectionsTest, OneNodeHostSteersNothing) {
  Snapshot s = MakeHost(1, 4);
  s.targets.push_back(MakeWorker(s, 10, 0, -1, 0));
  s.targets.push_back(MakeWorker(s, 11, 0, -1, 0));
  s.listen_groups.push_back(Group({10, 11}));
  EXPECT_THAT(Decide(s, DefaultPolicy(), History{}).connections, IsEmpty());
}

// The workers homed on `node` ran for `busy` of the tick.
void SetNodeBusy(Snapshot& s, int node, double busy) {
  for (Target& t : s.targets) {
    for (ThreadSample& thread : t.threads) {
      if (thread.runtime_ns[node] == 0) continue;
      thread.runtime_ns[node] = static_cast<uint64_t>(busy * s.tick_ns);
    }
  }
}

TEST(DecideConnectionsTest, ABusyNodeSpillsDownToTheThreshold) {
  Snapshot s = PlacedHost();
  SetNodeBusy(s, 0, 1.0);  // every NIC interrupt lands on node 0
  SetNodeBusy(s, 1, 0.3);
  const Plan plan = Decide(s, DefaultPolicy(), History{});
  ASSERT_EQ(plan.connections.size(), 1u);
  // 100% busy, threshold 85%: shed 15% of the node's new connections.
  EXPECT_EQ(NodeOf(plan.connections[0], 0).spill_permille, 150u);
  EXPECT_EQ(NodeOf(plan.connections[0], 1).spill_permille, 0u);
  EXPECT_THAT(plan.connections[0].reason, HasSubstr("spilling 15%"));
}

TEST(DecideConnectionsTest, SpillHoldsWhileTheNodeSitsAtTheThreshold) {
  Snapshot s = PlacedHost();
  SetNodeBusy(s, 0, 0.85);  // shedding 15% brought it to the threshold
  History history;
  history.spill_permille["netns 1 0.0.0.0:80"][0] = 150;
  Plan plan = Decide(s, DefaultPolicy(), history);
  // Without the spill it would be at 100%: keep shedding what it sheds.
  EXPECT_EQ(NodeOf(plan.connections[0], 0).spill_permille, 150u);

  SetNodeBusy(s, 0, 0.5);  // the load went away
  plan = Decide(s, DefaultPolicy(), history);
  EXPECT_EQ(NodeOf(plan.connections[0], 0).spill_permille, 0u);
}

TEST(DecideConnectionsTest, SpillNeverTakesEveryConnectionAway) {
  Snapshot s = PlacedHost();
  SetNodeBusy(s, 0, 1.0);
  History history;
  history.spill_permille["netns 1 0.0.0.0:80"][0] = 900;
  v1::Policy policy = DefaultPolicy();
  policy.mutable_connections()->set_spill_above_busy(0.1);
  const Plan plan = Decide(s, policy, history);
  EXPECT_EQ(NodeOf(plan.connections[0], 0).spill_permille, 900u);
}

TEST(DecideConnectionsTest, ThresholdOneNeverSpills) {
  Snapshot s = PlacedHost();
  SetNodeBusy(s, 0, 1.0);
  v1::Policy policy = DefaultPolicy();
  policy.mutable_connections()->set_spill_above_busy(1.0);
  EXPECT_EQ(
      NodeOf(Decide(s, policy, History{}).connections[0], 0).spill_permille,
      0u);
}

}  // namespace
}  // namespace locus
