// The loop's side of an A/B experiment: the workers the experiment leaves
// alone are put back and kept out of the plan; the treated ones are planned
// as ever; no IRQ moves while it runs; the report rides on the tick.
#include <memory>
#include <variant>

#include "agent/core/loop.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/fakes.h"

namespace locus::testing {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

class FakeExperiment : public ExperimentPort {
 public:
  ArmsThisTick OnTick(const Snapshot&, Mode, const PolicyState&,
                      const History&) override {
    ++ticks;
    ArmsThisTick arms = next;
    next.release.clear();
    return arms;
  }
  ArmsThisTick next;
  int ticks = 0;
};

// Two misplaced workers (pids 100 and 200, memory on node 1, running on
// node 0) and a NIC queue whose IRQ sits on node 1.
Snapshot TwoWorkers(uint64_t now_ns) {
  Snapshot s = MisplacedWorker(now_ns);
  Target other = s.targets[0];
  other.pid = 200;
  other.threads[0].tid = 200;
  s.targets.push_back(other);
  s.irqs.push_back(MakeNicIrq(s, 40, "eth0", 0, 1, NodeCpus(s, 1), 5000));
  return s;
}

int32_t PidOf(const Action& action) {
  if (const auto* pin = std::get_if<PinThread>(&action.op)) return pin->pid;
  if (const auto* move = std::get_if<MigratePages>(&action.op))
    return move->pid;
  return 0;
}

struct Harness {
  Harness()
      : source([this](int) {
          clock.Advance(kSecond);
          return TwoWorkers(clock.NowNs());
        }),
        loop(
            {}, &source, &policy, &executor,
            [this](const TickReport& r) { reports.push_back(r); }, &clock) {
    loop.set_experiment(&experiment);
  }
  FakeClock clock{kSecond};
  FakeSource source;
  FakePolicy policy;
  FakeExecutor executor;
  FakeExperiment experiment;
  std::vector<TickReport> reports;
  Loop loop;
};

TEST(LoopExperimentTest, WithoutAnExperimentBothWorkersAreTreated) {
  Harness h;
  h.loop.set_experiment(nullptr);
  TickReport report = h.loop.Tick();
  std::set<int32_t> pids;
  for (const Action& action : report.plan.actions) pids.insert(PidOf(action));
  EXPECT_TRUE(pids.count(100) && pids.count(200));
  EXPECT_EQ(report.experiment, nullptr);
}

TEST(LoopExperimentTest, TheControlArmIsPutBackAndLeftOutOfThePlan) {
  Harness h;
  h.experiment.next.untreated = {200};
  h.experiment.next.release = {200};
  auto report = std::make_shared<v1::ExperimentReport>();
  report->set_id("exp-1");
  h.experiment.next.report = report;

  TickReport tick = h.loop.Tick();
  ASSERT_THAT(tick.plan.actions, Not(IsEmpty()));
  for (const Action& action : tick.plan.actions) {
    EXPECT_NE(PidOf(action), 200) << Describe(action);
    EXPECT_FALSE(std::holds_alternative<SetIrqAffinity>(action.op))
        << "no IRQ moves during an experiment: " << Describe(action);
  }
  // Its journaled pin and its page moves are undone.
  bool pin_reverted = false, moves_dropped = false;
  for (const Action& action : h.executor.reverted) {
    if (const auto* pin = std::get_if<PinThread>(&action.op))
      pin_reverted |= pin->pid == 200 && pin->tid == 200;
    if (const auto* move = std::get_if<MigratePages>(&action.op))
      moves_dropped |= move->pid == 200;
  }
  EXPECT_TRUE(pin_reverted);
  EXPECT_TRUE(moves_dropped);
  ASSERT_NE(tick.experiment, nullptr);
  EXPECT_EQ(tick.experiment->id(), "exp-1");
  EXPECT_THAT(h.loop.ExplainTask(200), Not(IsEmpty()));

  // Released once: the next tick reverts nothing, and still plans nothing
  // for the control worker.
  h.executor.reverted.clear();
  tick = h.loop.Tick();
  EXPECT_THAT(h.executor.reverted, IsEmpty());
  for (const Action& action : tick.plan.actions) EXPECT_NE(PidOf(action), 200);
}

// A switchback's on block: the policy acts on the whole host, IRQs
// included, through the levers under test only.
TEST(LoopExperimentTest, AnOnBlockPlansTheWholeHostThroughItsLevers) {
  Harness h;
  TickReport tick = h.loop.Tick();
  bool pin = false;
  for (const Action& action : tick.plan.actions)
    pin |= std::holds_alternative<PinThread>(action.op);
  ASSERT_TRUE(pin) << "the fixture plans pins";

  Harness no_threads;
  no_threads.experiment.next.levers = Levers{
      .threads = false, .pages = true, .irqs = true, .connections = true};
  tick = no_threads.loop.Tick();
  for (const Action& action : tick.plan.actions) {
    EXPECT_FALSE(std::holds_alternative<PinThread>(action.op))
        << Describe(action);
  }
  EXPECT_THAT(tick.plan.notes, Contains(HasSubstr("pin(s) held")));
}

// A switchback's off block: everything put back on its first tick, and
// every tick of it planned but not carried out.
TEST(LoopExperimentTest, AnOffBlockPutsEverythingBackAndActsOnNothing) {
  Harness h;
  h.experiment.next.off = true;
  h.experiment.next.restore = true;
  TickReport tick = h.loop.Tick();
  EXPECT_EQ(h.executor.restores, 1);
  EXPECT_EQ(tick.mode, v1::Policy::MODE_DRY_RUN);
  ASSERT_THAT(h.executor.dry_runs, Not(IsEmpty()));
  for (bool dry_run : h.executor.dry_runs) EXPECT_TRUE(dry_run);
  EXPECT_GE(h.executor.page_move_stops, 1);

  // Later ticks of the block: held, not restored again.
  h.experiment.next.restore = false;
  h.executor.dry_runs.clear();
  tick = h.loop.Tick();
  EXPECT_EQ(h.executor.restores, 1);
  for (bool dry_run : h.executor.dry_runs) EXPECT_TRUE(dry_run);

  // The next on block acts again.
  h.experiment.next.off = false;
  h.executor.dry_runs.clear();
  tick = h.loop.Tick();
  EXPECT_EQ(tick.mode, v1::Policy::MODE_ENFORCE);
  ASSERT_THAT(h.executor.dry_runs, Not(IsEmpty()));
  EXPECT_FALSE(h.executor.dry_runs.front());
}

}  // namespace
}  // namespace locus::testing
