// ConnectionSteering against the fake kernel: the order of journal and
// attach, duplicates closed on every path, maps updated rather than the
// program re-attached, re-created and vanished groups, failures reported
// with nothing left attached, and DetachAll.
#include "agent/act/connections/connection_steering.h"

#include <netinet/in.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/connections/fake_reuseport_ops.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int32_t kMaster = 10;

ListenKey Key(uint16_t port) {
  ListenKey key;
  key.netns = 4026531840;
  key.address.family = AF_INET;
  key.address.port = port;
  return key;
}

class ConnectionSteeringTest : public ::testing::Test {
 protected:
  // A group on `port` (the fake's group number too) whose sockets the
  // master holds at fd == inode.
  ListenGroup Group(uint16_t port, const std::vector<uint64_t>& inodes) {
    ListenGroup group{Key(port), {}};
    for (uint64_t inode : inodes) {
      ops_.AddSocket(kMaster, static_cast<int>(inode), inode, port);
      group.sockets.push_back({inode, static_cast<int32_t>(100 + inode),
                               kMaster, static_cast<int>(inode)});
    }
    return group;
  }

  // Socket i of `inodes` steered to node i.
  static GroupSteering OnePerNode(const std::vector<uint64_t>& inodes) {
    GroupSteering steering;
    for (size_t i = 0; i < inodes.size(); ++i) {
      steering.nodes[i].inodes = {inodes[i]};
    }
    return steering;
  }

  void Apply(const std::vector<ListenGroup>& groups, const SteeringPlan& plan) {
    steering_.Apply(groups, cpus_, plan);
    EXPECT_EQ(ops_.OpenDuplicates(), 0) << "a duplicate was left open";
  }

  // The socket inodes node `node` of program `program` (1-based) steers to.
  std::vector<uint64_t> NodeInodes(int program, int node) {
    const FakeProgramState& state = *ops_.programs.at(program - 1);
    std::vector<uint64_t> inodes;
    for (uint32_t slot : state.nodes.at(node).slots) {
      inodes.push_back(state.slots.at(slot));
    }
    return inodes;
  }

  SteeringGroupStatus StatusOf(uint16_t port) {
    return steering_.status().at(Key(port));
  }

  std::vector<int> cpus_ = {0, 0, 1, 1};
  FakeReuseportOps ops_;
  FakeSteeringJournal journal_{&ops_.events};
  ConnectionSteering steering_{&ops_, &journal_};
};

TEST_F(ConnectionSteeringTest, JournalsTheAttachBeforeMakingItAndFillsTheMaps) {
  ListenGroup group = Group(80, {11, 12});
  Apply({group}, {{Key(80), OnePerNode({11, 12})}});
  EXPECT_THAT(ops_.events,
              ElementsAre("load 1", "journal 80", "attach group 80 program 1"));
  EXPECT_EQ(ops_.attached.at(80), 1);
  EXPECT_EQ(ops_.programs[0]->node_of_cpu, cpus_);
  EXPECT_THAT(NodeInodes(1, 0), ElementsAre(11));
  EXPECT_THAT(NodeInodes(1, 1), ElementsAre(12));
  SteeringGroupStatus status = StatusOf(80);
  EXPECT_TRUE(status.attached);
  EXPECT_TRUE(status.migrates);
  EXPECT_EQ(status.sockets, 2u);
  EXPECT_EQ(status.problem, "");
}

// An experiment's control sockets: written as the control arm with their
// share of all the sockets, the treated ones as the other arm; rewritten
// only when they change, and cleared when the experiment ends.
TEST_F(ConnectionSteeringTest, WritesAnExperimentsArmsOnlyWhenTheyChange) {
  ListenGroup group = Group(80, {11, 12, 13, 14});
  Apply({group}, {{Key(80), OnePerNode({11, 12})}});
  const FakeProgramState& state = *ops_.programs.at(0);
  EXPECT_EQ(state.arm_writes, 0) << "no experiment, nothing to write";

  GroupSteering arms = OnePerNode({11, 12});
  arms.control = {13, 14};
  Apply({group}, {{Key(80), arms}});
  EXPECT_EQ(state.arm_writes, 1);
  EXPECT_EQ(state.arms.control_share, kReuseportArmScale / 2);
  std::vector<uint64_t> control, treated;
  for (uint32_t slot : state.arms.control)
    control.push_back(state.slots.at(slot));
  for (uint32_t slot : state.arms.treated)
    treated.push_back(state.slots.at(slot));
  EXPECT_THAT(control, ElementsAre(13, 14));
  EXPECT_THAT(treated, ElementsAre(11, 12));
  Apply({group}, {{Key(80), arms}});
  EXPECT_EQ(state.arm_writes, 1);

  Apply({group}, {{Key(80), OnePerNode({11, 12})}});
  EXPECT_EQ(state.arm_writes, 2);
  EXPECT_EQ(state.arms, ReuseportArms{});
  EXPECT_EQ(StatusOf(80).problem, "");
}

// A group first steered during an experiment: its arms are in the program
// before it is attached, like its node table.
TEST_F(ConnectionSteeringTest, AnExperimentsArmsAreWrittenBeforeTheAttach) {
  ListenGroup group = Group(80, {11, 12, 13});
  GroupSteering arms = OnePerNode({11, 12});
  arms.control = {13};
  Apply({group}, {{Key(80), arms}});
  EXPECT_TRUE(StatusOf(80).attached) << StatusOf(80).problem;
  const FakeProgramState& state = *ops_.programs.at(0);
  EXPECT_EQ(state.arm_writes, 1);
  EXPECT_EQ(state.arms.control.size(), 1u);
  EXPECT_EQ(state.arms.treated.size(), 2u);
  // One of three: a third of the new connections, rounded.
  EXPECT_EQ(state.arms.control_share, 333333u);
}

TEST_F(ConnectionSteeringTest, ASocketInBothArmsIsRefused) {
  ListenGroup group = Group(80, {11, 12});
  GroupSteering both = OnePerNode({11, 12});
  both.control = {12};
  Apply({group}, {{Key(80), both}});
  EXPECT_FALSE(StatusOf(80).attached);
  EXPECT_THAT(StatusOf(80).problem,
              HasSubstr("socket inode 12 is in the control arm and on node 1"));
}

// Attached already: a plan with a socket in both arms changes nothing.
TEST_F(ConnectionSteeringTest, ASocketInBothArmsKeepsTheLastGoodArms) {
  ListenGroup group = Group(80, {11, 12, 13});
  GroupSteering good = OnePerNode({11, 12});
  good.control = {13};
  Apply({group}, {{Key(80), good}});
  const FakeProgramState& state = *ops_.programs.at(0);
  ReuseportArms before = state.arms;
  GroupSteering bad = OnePerNode({11, 12});
  bad.control = {11, 13};
  Apply({group}, {{Key(80), bad}});
  EXPECT_TRUE(StatusOf(80).attached);
  EXPECT_THAT(StatusOf(80).problem,
              HasSubstr("in the control arm and on node"));
  EXPECT_EQ(state.arm_writes, 1);
  EXPECT_EQ(state.arms, before);
}

// The fake's rows hold 4 slots: a fifth control socket is left out (and the
// share is that of the four written), and said.
TEST_F(ConnectionSteeringTest, ControlSocketsBeyondTheRowAreLeftOutAndSaid) {
  ListenGroup group = Group(80, {11, 12, 13, 14, 15, 16, 17});
  GroupSteering arms = OnePerNode({11, 12});
  arms.control = {13, 14, 15, 16, 17};
  Apply({group}, {{Key(80), arms}});
  SteeringGroupStatus status = StatusOf(80);
  EXPECT_TRUE(status.attached) << status.problem;
  EXPECT_THAT(status.problem,
              HasSubstr("5 control sockets, the control row holds 4: 1 left "
                        "out"));
  const FakeProgramState& state = *ops_.programs.at(0);
  std::vector<uint64_t> control;
  for (uint32_t slot : state.arms.control)
    control.push_back(state.slots.at(slot));
  EXPECT_THAT(control, ElementsAre(13, 14, 15, 16));
  EXPECT_EQ(state.arms.control_share, 666667u);  // 4 of 6
}

// More treated sockets than the treated row holds: each keeps its node's
// connections, the spill goes to the first four only; the share counts all.
TEST_F(ConnectionSteeringTest, TreatedSocketsBeyondTheRowKeepTheirShare) {
  ListenGroup group = Group(80, {11, 12, 13, 14, 15, 16});
  GroupSteering arms;
  arms.nodes[0].inodes = {11, 12, 13};
  arms.nodes[1].inodes = {14, 15};
  arms.control = {16};
  Apply({group}, {{Key(80), arms}});
  SteeringGroupStatus status = StatusOf(80);
  EXPECT_TRUE(status.attached) << status.problem;
  EXPECT_THAT(status.problem, HasSubstr("5 treated sockets, the treated row "
                                        "holds 4: the spill goes to the "
                                        "first 4 only"));
  const FakeProgramState& state = *ops_.programs.at(0);
  EXPECT_EQ(state.arms.treated.size(), 4u);
  EXPECT_EQ(state.arms.control_share, 166667u);  // 1 of 6
  EXPECT_THAT(NodeInodes(1, 0), ElementsAre(11, 12, 13));
}

// Its control sockets all gone: the group is steered as without an
// experiment (nothing to keep apart), and says why.
TEST_F(ConnectionSteeringTest, ControlSocketsWithoutASlotAreSaid) {
  ListenGroup group = Group(80, {11, 12});
  GroupSteering arms = OnePerNode({11, 12});
  arms.control = {99};
  Apply({group}, {{Key(80), arms}});
  EXPECT_TRUE(StatusOf(80).attached);
  EXPECT_THAT(StatusOf(80).problem,
              HasSubstr("experiment: socket inode 99 not in the socket array"));
  EXPECT_EQ(ops_.programs.at(0)->arms, ReuseportArms{});
}

TEST_F(ConnectionSteeringTest, AMovedWorkerMovesItsSlotWithoutReattaching) {
  ListenGroup group = Group(80, {11, 12});
  Apply({group}, {{Key(80), OnePerNode({11, 12})}});
  GroupSteering moved;
  moved.nodes[0].inodes = {11, 12};
  moved.nodes[1].spill_permille = 200;
  Apply({group}, {{Key(80), moved}});
  Apply({group}, {{Key(80), moved}});  // nothing changed: nothing written
  EXPECT_THAT(ops_.events,
              ElementsAre("load 1", "journal 80", "attach group 80 program 1"));
  EXPECT_THAT(NodeInodes(1, 0), ElementsAre(11, 12));
  EXPECT_EQ(ops_.programs[0]->nodes.at(1).spill_permille, 200u);
  EXPECT_EQ(ops_.programs[0]->node_writes, 2);
  EXPECT_EQ(ops_.programs[0]->cpu_writes, 1);
  cpus_ = {0, 1, 1, 1};
  Apply({group}, {{Key(80), moved}});
  EXPECT_EQ(ops_.programs[0]->node_of_cpu, cpus_);
}

TEST_F(ConnectionSteeringTest, NewAndClosedSocketsChangeSlotsNotTheProgram) {
  Apply({Group(80, {11, 12})}, {{Key(80), OnePerNode({11, 12})}});
  ListenGroup later = Group(80, {11, 13});  // 12 closed, 13 opened
  Apply({later}, {{Key(80), OnePerNode({11, 13})}});
  EXPECT_EQ(ops_.programs.size(), 1u);
  EXPECT_THAT(NodeInodes(1, 1), ElementsAre(13));
  std::vector<uint64_t> held;
  for (const auto& [slot, inode] : ops_.programs[0]->slots) {
    held.push_back(inode);
  }
  EXPECT_THAT(held, ::testing::UnorderedElementsAre(11, 13));
}

TEST_F(ConnectionSteeringTest, ARecreatedGroupIsAttachedAgain) {
  Apply({Group(80, {11, 12})}, {{Key(80), OnePerNode({11, 12})}});
  // nginx restarted: same address, every socket new.
  Apply({Group(80, {21, 22})}, {{Key(80), OnePerNode({21, 22})}});
  EXPECT_THAT(ops_.events,
              ElementsAre("load 1", "journal 80", "attach group 80 program 1",
                          "forget 80", "load 2", "journal 80",
                          "attach group 80 program 2"));
  EXPECT_TRUE(ops_.programs[0]->destroyed);
  EXPECT_THAT(NodeInodes(2, 1), ElementsAre(22));
  EXPECT_EQ(journal_.records.size(), 1u);
}

TEST_F(ConnectionSteeringTest, AVanishedGroupIsForgottenWithoutDetaching) {
  Apply({Group(80, {11, 12})}, {{Key(80), OnePerNode({11, 12})}});
  Apply({}, {{Key(80), OnePerNode({11, 12})}});
  EXPECT_EQ(ops_.events.back(), "forget 80");
  EXPECT_THAT(journal_.records, IsEmpty());
  EXPECT_TRUE(ops_.programs[0]->destroyed);
  EXPECT_THAT(steering_.status(), IsEmpty());
}

TEST_F(ConnectionSteeringTest, AGroupNoLongerPlannedIsDetached) {
  ListenGroup group = Group(80, {11, 12});
  Apply({group}, {{Key(80), OnePerNode({11, 12})}});
  Apply({group}, {});
  EXPECT_THAT(ops_.attached, IsEmpty());
  EXPECT_THAT(journal_.records, IsEmpty());
  EXPECT_EQ(ops_.events.back(), "forget 80");
}

TEST_F(ConnectionSteeringTest, RefusedDuplicationIsReportedAndNothingAttached) {
  ListenGroup group = Group(80, {11, 12});
  ops_.dup_errors[12] = EPERM;  // Yama ptrace_scope 3, or an LSM
  Apply({group}, {{Key(80), OnePerNode({11, 12})}});
  SteeringGroupStatus status = StatusOf(80);
  EXPECT_FALSE(status.attached);
  EXPECT_THAT(status.problem, HasSubstr("Operation not permitted"));
  EXPECT_THAT(status.problem, HasSubstr("ptrace"));
  EXPECT_THAT(ops_.attached, IsEmpty());
  EXPECT_THAT(journal_.records, IsEmpty());
  // The same sockets fail the same way: not tried again.
  Apply({group}, {{Key(80), OnePerNode({11, 12})}});
  EXPECT_EQ(ops_.programs.size(), 1u);
  EXPECT_TRUE(ops_.programs[0]->destroyed);
}

TEST_F(ConnectionSteeringTest, NoSkReuseportSupportIsReported) {
  ops_.load_error = absl::InvalidArgumentError(
      "load the sk_reuseport program: Invalid argument");
  Apply({Group(80, {11, 12})}, {{Key(80), OnePerNode({11, 12})}});
  EXPECT_FALSE(StatusOf(80).attached);
  EXPECT_THAT(StatusOf(80).problem, HasSubstr("sk_reuseport"));
  EXPECT_THAT(ops_.attached, IsEmpty());
}

TEST_F(ConnectionSteeringTest, AFailedAttachForgetsItsRecord) {
  ops_.attach_error = EINVAL;
  Apply({Group(80, {11, 12})}, {{Key(80), OnePerNode({11, 12})}});
  EXPECT_THAT(ops_.events, ElementsAre("load 1", "journal 80", "forget 80"));
  EXPECT_THAT(StatusOf(80).problem, HasSubstr("SO_ATTACH_REUSEPORT_EBPF"));
  EXPECT_THAT(journal_.records, IsEmpty());
}

TEST_F(ConnectionSteeringTest, AnUnwritableJournalAttachesNothing) {
  journal_.record_error = absl::PermissionDeniedError("/var/lib/locus: EROFS");
  Apply({Group(80, {11, 12})}, {{Key(80), OnePerNode({11, 12})}});
  EXPECT_THAT(ops_.attached, IsEmpty());
  EXPECT_THAT(StatusOf(80).problem, HasSubstr("journal: "));
}

TEST_F(ConnectionSteeringTest, ASocketGoneBeforeDuplicationIsLeftOut) {
  ListenGroup group = Group(80, {11, 12});
  ops_.sockets.erase({kMaster, 12});  // closed since discovery: EBADF
  Apply({group}, {{Key(80), OnePerNode({11, 12})}});
  SteeringGroupStatus status = StatusOf(80);
  EXPECT_TRUE(status.attached);
  EXPECT_EQ(status.sockets, 1u);
  EXPECT_THAT(status.problem, HasSubstr("inode 12 gone"));
  EXPECT_THAT(NodeInodes(1, 1), IsEmpty());
}

TEST_F(ConnectionSteeringTest, ABadPlanKeepsTheLastGoodMaps) {
  ListenGroup group = Group(80, {11, 12});
  Apply({group}, {{Key(80), OnePerNode({11, 12})}});
  GroupSteering bad;
  bad.nodes[9].inodes = {11};  // the fake has 4 nodes
  Apply({group}, {{Key(80), bad}});
  EXPECT_TRUE(StatusOf(80).attached);
  EXPECT_THAT(StatusOf(80).problem, HasSubstr("plan: node 9"));
  EXPECT_THAT(NodeInodes(1, 1), ElementsAre(12));
  // Never attached with a bad plan either.
  Apply({Group(81, {31})}, {{Key(81), bad}});
  EXPECT_FALSE(StatusOf(81).attached);
  EXPECT_EQ(ops_.programs.size(), 1u);
}

TEST_F(ConnectionSteeringTest, AFailedUpdateDetachesTheGroup) {
  Apply({Group(80, {11, 12})}, {{Key(80), OnePerNode({11, 12})}});
  ops_.dup_errors[13] = EPERM;
  Apply({Group(80, {11, 12, 13})}, {{Key(80), OnePerNode({11, 12})}});
  EXPECT_FALSE(StatusOf(80).attached);
  EXPECT_THAT(StatusOf(80).problem, HasSubstr("Operation not permitted"));
  EXPECT_THAT(ops_.attached, IsEmpty());
  EXPECT_THAT(journal_.records, IsEmpty());
}

TEST_F(ConnectionSteeringTest, DetachAllDetachesEveryGroupThroughALiveMember) {
  ListenGroup web = Group(80, {11, 12});
  ListenGroup tls = Group(443, {41, 42});
  Apply({web, tls},
        {{Key(80), OnePerNode({11, 12})}, {Key(443), OnePerNode({41, 42})}});
  ops_.sockets.erase({kMaster, 11});  // the first member is gone
  ASSERT_TRUE(steering_.DetachAll().ok());
  EXPECT_THAT(ops_.attached, IsEmpty());
  EXPECT_THAT(journal_.records, IsEmpty());
  EXPECT_THAT(steering_.status(), IsEmpty());
  EXPECT_EQ(ops_.OpenDuplicates(), 0);
}

TEST_F(ConnectionSteeringTest, DetachAllKeepsTheRecordOfAGroupItCannotReach) {
  Apply({Group(80, {11})}, {{Key(80), OnePerNode({11})}});
  ops_.dup_errors[11] = EPERM;
  absl::Status status = steering_.DetachAll();
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("netns 4026531840"));
  EXPECT_EQ(journal_.records.count(Key(80)), 1u);
}

TEST_F(ConnectionSteeringTest, CountersComeFromTheGroupsProgram) {
  Apply({Group(80, {11, 12})}, {{Key(80), OnePerNode({11, 12})}});
  ops_.programs[0]->counters.nodes[1] = {5, 1, 2, 0};
  auto counters = steering_.Counters(Key(80));
  ASSERT_TRUE(counters.ok()) << counters.status();
  EXPECT_EQ(counters->nodes.at(1).local, 5u);
  EXPECT_TRUE(absl::IsNotFound(steering_.Counters(Key(81)).status()));
}

TEST(DetachReuseportGroupTest, DetachesThroughTheGivenMember) {
  FakeReuseportOps ops;
  ops.AddSocket(kMaster, 7, 70, 80);
  ops.attached[80] = 3;  // left by a run that crashed
  GroupSocket member{70, 101, kMaster, 7};
  EXPECT_TRUE(DetachReuseportGroup(ops, Key(80), member).ok());
  EXPECT_THAT(ops.attached, IsEmpty());
  // None attached: nothing to do, no error.
  EXPECT_TRUE(DetachReuseportGroup(ops, Key(80), member).ok());
  EXPECT_EQ(ops.OpenDuplicates(), 0);
  GroupSocket gone{70, 101, kMaster, 8};
  EXPECT_TRUE(absl::IsNotFound(DetachReuseportGroup(ops, Key(80), gone)));
}

}  // namespace
}  // namespace locus
