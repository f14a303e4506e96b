// An experiment's control arm from the policy's plan to the metrics stream:
// ActuatorExecutor passes ListenGroupSteering::control_inodes to the
// actuator (the fake program's arms), reads the program's CONTROL counter
// into the tick's and the total's counts, and AddConnectionGroups puts them
// in NodeConnections.control / control_total.
#include <netinet/in.h>

#include <memory>
#include <string>
#include <vector>

#include "agent/act/actuators.h"
#include "agent/daemon/connection_metrics.h"
#include "agent/daemon/executor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/connections/fake_reuseport_ops.h"
#include "tests/act/fake_kernel_ops.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;

constexpr int32_t kMaster = 10;

class SteeringMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    key_.netns = 4026531840;
    key_.address.family = AF_INET;
    key_.address.port = 80;
    ListenGroup group{key_, {}};
    auto reuseport = std::make_unique<FakeReuseportOps>();
    for (uint64_t inode : {11, 12, 13}) {
      reuseport->AddSocket(kMaster, static_cast<int>(inode), inode, 80);
      group.sockets.push_back({inode, static_cast<int32_t>(100 + inode),
                               kMaster, static_cast<int>(inode)});
    }
    reuseport_ = reuseport.get();

    ActuatorOptions options;
    options.journal.path = tree_.root() + "/journal";
    KernelOps ops;
    ops.threads = std::make_unique<FakeThreadOps>();
    ops.irqs = std::make_unique<FakeIrqOps>();
    ops.pages = std::make_unique<FakePageOps>();
    ops.clock = std::make_unique<FakeClock>();
    auto actuators = Actuators::Create(options, std::move(ops));
    ASSERT_TRUE(actuators.ok()) << actuators.status();
    SteeringParts parts;
    parts.ops = std::move(reuseport);
    parts.groups = [group] { return std::vector<ListenGroup>{group}; };
    executor_ = std::make_unique<ActuatorExecutor>(*std::move(actuators),
                                                   std::move(parts));

    ListenGroupSteering steer;
    steer.group = ListenKeyString(key_);
    steer.nodes = {{0, {11}, 0}, {1, {12}, 0}};
    steer.control_inodes = {13};
    plan_ = {steer};
  }

  std::vector<SteeringState> Tick() {
    return executor_->SteerConnections(plan_, {0, 0, 1, 1}, false);
  }

  TempTree tree_;
  ListenKey key_;
  FakeReuseportOps* reuseport_ = nullptr;
  std::unique_ptr<ActuatorExecutor> executor_;
  std::vector<ListenGroupSteering> plan_;
};

TEST_F(SteeringMetricsTest, ThePlansControlSocketsBecomeTheControlArm) {
  std::vector<SteeringState> states = Tick();
  ASSERT_EQ(states.size(), 1u);
  EXPECT_TRUE(states[0].steered) << states[0].problem;
  const FakeProgramState& program = *reuseport_->programs.at(0);
  std::vector<uint64_t> control, treated;
  for (uint32_t slot : program.arms.control)
    control.push_back(program.slots.at(slot));
  for (uint32_t slot : program.arms.treated)
    treated.push_back(program.slots.at(slot));
  EXPECT_THAT(control, ElementsAre(13));
  EXPECT_THAT(treated, ElementsAre(11, 12));
  EXPECT_EQ(program.arms.control_share, 333333u);

  // The experiment ends: the plan has no control sockets, the rows go.
  plan_[0].control_inodes.clear();
  Tick();
  EXPECT_EQ(program.arms, ReuseportArms{});
  EXPECT_EQ(program.arm_writes, 2);
}

TEST_F(SteeringMetricsTest, TheControlCounterReachesTheStream) {
  Tick();
  FakeProgramState& program = *reuseport_->programs.at(0);
  program.counters.nodes[0] = {5, 0, 0, 0, 3};
  Tick();
  program.counters.nodes[0] = {9, 1, 0, 0, 7};
  std::vector<SteeringState> states = Tick();
  ASSERT_EQ(states.size(), 1u);
  EXPECT_EQ(states[0].tick.at(0).control, 4u);
  EXPECT_EQ(states[0].total.at(0).control, 7u);

  v1::Metrics metrics;
  AddConnectionGroups(states, plan_, &metrics);
  ASSERT_EQ(metrics.connections_size(), 1);
  const v1::ConnectionGroup& group = metrics.connections(0);
  ASSERT_EQ(group.nodes_size(), 2);  // the plan's nodes 0 and 1
  const v1::NodeConnections& node = group.nodes(0);
  EXPECT_EQ(node.node(), 0);
  EXPECT_EQ(node.control(), 4u);
  EXPECT_EQ(node.control_total(), 7u);
  EXPECT_EQ(node.local(), 4u);
  EXPECT_EQ(node.local_total(), 9u);
  EXPECT_EQ(group.nodes(1).control_total(), 0u);
}

}  // namespace
}  // namespace locus
