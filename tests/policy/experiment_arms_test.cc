// The plan an experiment lets through: decided without the untreated
// workers, with no IRQ moves, the control arm's sockets named per group.
#include "policy/experiment_arms.h"

#include <variant>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/snapshot_builder.h"

namespace locus::testing {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Snapshot ThreeWorkers() {
  Snapshot s = MakeHost(2, 2);
  for (int pid : {101, 102, 103})
    s.targets.push_back(MakeWorker(s, pid, 0, -1, 0));
  ListenGroupSample group;
  group.name = "netns 1 127.0.0.1:80";
  group.port = 80;
  group.sockets = {{11, 101}, {12, 102}, {13, 103}, {14, 0}};
  s.listen_groups.push_back(group);
  return s;
}

TEST(ExperimentArmsTest, TheUntreatedWorkersAreLeftOutOfTheSnapshot) {
  Snapshot s = ThreeWorkers();
  s.tiering.demoted_total = 7;
  s.refused_targets.push_back({.pid = 9, .comm = "nginx", .reason = "x"});
  Snapshot treated = WithoutUnits(s, {102});
  ASSERT_EQ(treated.targets.size(), 2u);
  EXPECT_EQ(treated.targets[0].pid, 101);
  EXPECT_EQ(treated.targets[1].pid, 103);
  // Everything else is the host as it is.
  EXPECT_EQ(treated.listen_groups.size(), 1u);
  EXPECT_EQ(treated.topology.nodes.size(), 2u);
  EXPECT_EQ(treated.now_ns, s.now_ns);
  EXPECT_EQ(treated.tiering.demoted_total, 7);
  EXPECT_EQ(treated.refused_targets.size(), 1u);
}

TEST(ExperimentArmsTest, NoIrqMovesAndTheControlSocketsAreNamed) {
  Snapshot s = ThreeWorkers();
  Plan plan;
  plan.actions.push_back(Action{PinThread{101, 101, 1, {2, 3}}, "pin", 0.5});
  plan.actions.push_back(Action{SetIrqAffinity{40, {2}}, "irq", 0.5});
  ListenGroupSteering steer;
  steer.group = "netns 1 127.0.0.1:80";
  steer.reason = "by node";
  plan.connections.push_back(steer);
  FitPlanToArms(s, {102}, Levers{}, plan);
  ASSERT_EQ(plan.actions.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<PinThread>(plan.actions[0].op));
  EXPECT_THAT(plan.notes, ElementsAre(HasSubstr("1 IRQ move(s) held")));
  EXPECT_THAT(plan.connections[0].control_inodes, ElementsAre(12));
  EXPECT_THAT(plan.connections[0].reason, HasSubstr("1 control socket"));
}

TEST(ExperimentArmsTest, AGroupWithoutControlSocketsIsUnchanged) {
  Snapshot s = ThreeWorkers();
  Plan plan;
  ListenGroupSteering steer;
  steer.group = "netns 1 127.0.0.1:80";
  steer.reason = "by node";
  plan.connections.push_back(steer);
  FitPlanToArms(s, {999}, Levers{}, plan);
  EXPECT_THAT(plan.connections[0].control_inodes, IsEmpty());
  EXPECT_EQ(plan.connections[0].reason, "by node");
  EXPECT_THAT(plan.notes, IsEmpty());
}

// One lever at a time: `--levers=connections` keeps the steering (with its
// control sockets) and holds pins and page moves; `--levers=threads` the
// reverse.
TEST(ExperimentArmsTest, OnlyTheLeversUnderTestAct) {
  Snapshot s = ThreeWorkers();
  Plan full;
  full.actions.push_back(Action{PinThread{101, 101, 1, {2, 3}}, "pin", 0.5});
  full.actions.push_back(Action{MigratePages{101, -1, 1, 1 << 20}, "mv", 0.5});
  ListenGroupSteering steer;
  steer.group = "netns 1 127.0.0.1:80";
  full.connections.push_back(steer);

  Plan plan = full;
  FitPlanToArms(s, {102}, *ParseLevers({"connections"}), plan);
  EXPECT_THAT(plan.actions, IsEmpty());
  ASSERT_EQ(plan.connections.size(), 1u);
  EXPECT_THAT(plan.connections[0].control_inodes, ElementsAre(12));
  EXPECT_THAT(plan.notes,
              ElementsAre("experiment: 1 pin(s) held: threads is not a lever "
                          "under test",
                          "experiment: 1 page move(s) held: pages is not a "
                          "lever under test"));

  plan = full;
  FitPlanToArms(s, {102}, *ParseLevers({"threads"}), plan);
  ASSERT_EQ(plan.actions.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<PinThread>(plan.actions[0].op));
  EXPECT_THAT(plan.connections, IsEmpty());
  EXPECT_THAT(plan.notes, Contains(HasSubstr("connection steering held")));
}

// A switchback's on blocks act on the whole host: IRQ moves are a lever
// there, held like the others when not named.
TEST(ExperimentArmsTest, HoldLeversKeepsOnlyTheLeversNamedIrqsIncluded) {
  Plan full;
  full.actions.push_back(Action{PinThread{101, 101, 1, {2, 3}}, "pin", 0.5});
  full.actions.push_back(Action{MigratePages{101, -1, 1, 1 << 20}, "mv", 0.5});
  full.actions.push_back(Action{SetIrqAffinity{40, {2}}, "irq", 0.5});
  ListenGroupSteering steer;
  steer.group = "netns 1 127.0.0.1:80";
  full.connections.push_back(steer);

  Plan plan = full;
  HoldLevers(Levers{}, plan);
  EXPECT_EQ(plan.actions.size(), 3u);
  EXPECT_EQ(plan.connections.size(), 1u);
  EXPECT_THAT(plan.notes, IsEmpty());

  plan = full;
  HoldLevers(*ParseLevers({"irqs"}, /*switchback=*/true), plan);
  ASSERT_EQ(plan.actions.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<SetIrqAffinity>(plan.actions[0].op));
  EXPECT_THAT(plan.connections, IsEmpty());

  plan = full;
  HoldLevers(*ParseLevers({"threads"}, /*switchback=*/true), plan);
  ASSERT_EQ(plan.actions.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<PinThread>(plan.actions[0].op));
  EXPECT_THAT(plan.notes, Contains("experiment: 1 IRQ move(s) held: irqs is "
                                   "not a lever under test"));
}

TEST(ExperimentArmsTest, LeversAreNamedOnceEachAndTreatSomething) {
  EXPECT_THAT(LeverNames(*ParseLevers({})),
              ElementsAre("threads", "pages", "irqs", "connections"));
  EXPECT_THAT(LeverNames(*ParseLevers({"connections", "threads"})),
              ElementsAre("threads", "connections"));
  EXPECT_THAT(ParseLevers({"threads", "cpus"}).status().message(),
              HasSubstr("no lever 'cpus'"));
  EXPECT_THAT(ParseLevers({"pages", "pages"}).status().message(),
              HasSubstr("'pages' given twice"));
  EXPECT_THAT(ParseLevers({"irqs"}).status().message(),
              HasSubstr("irqs alone treats nothing"));
  EXPECT_THAT(LeverNames(*ParseLevers({"irqs"}, /*switchback=*/true)),
              ElementsAre("irqs"));
  EXPECT_THAT(ParseLevers({""}).status().message(), HasSubstr("no lever ''"));
  // A peer's name reaches the caller's terminal and the agent's log escaped.
  EXPECT_THAT(ParseLevers({"x\n\x1b[2J"}).status().message(),
              HasSubstr("no lever 'x\\n\\x1b[2J'"));
}

}  // namespace
}  // namespace locus::testing
