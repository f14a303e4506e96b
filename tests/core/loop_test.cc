#include "agent/core/loop.h"

#include <variant>

#include "absl/time/clock.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/fakes.h"

namespace locus {
namespace {

using ::locus::testing::FakeExecutor;
using ::locus::testing::FakePolicy;
using ::locus::testing::FakeSource;
using ::locus::testing::kSecond;
using ::locus::testing::MisplacedWorker;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Time passes a second while collecting and a second between ticks: the
// loop reads the clock at 1 s and 2 s in the first tick, 3 s and 4 s in the
// second...
struct Harness {
  explicit Harness(std::function<absl::StatusOr<Snapshot>(int)> make,
                   LoopOptions options = {})
      : source([this, make = std::move(make)](int n) {
          clock.Advance(kSecond);
          return make(n);
        }),
        loop(
            options, &source, &policy, &executor,
            [this](const TickReport& r) {
              reports.push_back(r);
              clock.Advance(kSecond);
            },
            &clock) {}

  FakeClock clock{kSecond};
  FakeSource source;
  FakePolicy policy;
  FakeExecutor executor;
  std::vector<TickReport> reports;
  Loop loop;
};

// What the loop logs over three ticks.
std::string LogOfThreeTicks(Harness& h) {
  ::testing::internal::CaptureStderr();
  h.loop.Tick();
  h.loop.Tick();
  h.loop.Tick();
  return ::testing::internal::GetCapturedStderr();
}

// A look-alike the scan refused is logged once, not every tick, and
// explain answers why it is not a target; the real target is acted on as
// before.
TEST(LoopTest, LogsEachRefusedLookAlikeOnceAndExplainsIt) {
  Harness h([](int n) {
    Snapshot s = MisplacedWorker((n + 1) * kSecond);
    s.refused_targets = {{4242, "nginx",
                          "not trusted as a target: its executable "
                          "/tmp/x/nginx is owned by uid 65534, not root"}};
    return s;
  });
  const std::string log = LogOfThreeTicks(h);
  const std::string line =
      "pid 4242 (nginx): not trusted as a target: its executable /tmp/x/nginx "
      "is owned by uid 65534, not root";
  EXPECT_THAT(log, HasSubstr(line));
  EXPECT_EQ(log.find(line), log.rfind(line)) << log;
  ASSERT_TRUE(h.loop.ExplainRefused(4242).has_value());
  EXPECT_EQ(RefusalMessage(*h.loop.ExplainRefused(4242)), line);
  EXPECT_FALSE(h.loop.ExplainRefused(100).has_value());
  EXPECT_THAT(h.loop.ExplainTask(100), Not(IsEmpty()));
}

TEST(LoopTest, AppliesThePlanAndPublishesTheTick) {
  Harness h([](int n) { return MisplacedWorker((n + 1) * kSecond); });
  TickReport report = h.loop.Tick();
  ASSERT_THAT(report.plan.actions, Not(IsEmpty()));
  EXPECT_EQ(h.executor.applied.size(), report.plan.actions.size());
  EXPECT_THAT(h.executor.dry_runs, ::testing::Each(false));
  ASSERT_EQ(h.reports.size(), 1u);
  EXPECT_EQ(h.reports[0].tick, 1u);
  EXPECT_EQ(report.actions[0].result.outcome, Outcome::kApplied);
  EXPECT_THAT(h.loop.ExplainTask(100), Not(IsEmpty()));
  EXPECT_THAT(h.loop.ExplainTask(100)[0].what, HasSubstr("applied"));
}

// The tick's CPU time is the loop thread's work, not the time it waited: a
// collection that computes for 30 ms counts, one that sleeps 60 ms does not.
TEST(LoopTest, TickCpuTimeIsWorkNotWaiting) {
  Harness h([](int n) {
    if (n == 0) {
      const uint64_t until = ThreadCpuNs() + 30'000'000;
      while (ThreadCpuNs() < until) {
      }
    } else {
      absl::SleepFor(absl::Milliseconds(60));
    }
    return MisplacedWorker((n + 1) * kSecond);
  });
  const TickReport computed = h.loop.Tick();
  const TickReport slept = h.loop.Tick();
  EXPECT_GE(computed.cpu, absl::Milliseconds(30));
  EXPECT_LT(slept.cpu, absl::Milliseconds(30));
}

TEST(LoopTest, DryRunPlansButAsksForNothingToChange) {
  Harness h([](int n) { return MisplacedWorker((n + 1) * kSecond); });
  h.loop.SetMode(v1::Policy::MODE_DRY_RUN);
  TickReport report = h.loop.Tick();
  ASSERT_THAT(report.plan.actions, Not(IsEmpty()));
  EXPECT_EQ(report.mode, v1::Policy::MODE_DRY_RUN);
  EXPECT_THAT(h.executor.dry_runs, ::testing::Each(true));
  EXPECT_EQ(report.actions[0].result.outcome, Outcome::kDryRun);
}

// Page moves go on between ticks: a switch to dry run stops them at the
// next tick, whether or not that tick plans anything.
TEST(LoopTest, EveryDryRunTickStopsThePageMoves) {
  Harness h([](int n) { return MisplacedWorker((n + 1) * kSecond); });
  h.loop.Tick();
  EXPECT_EQ(h.executor.page_move_stops, 0);
  h.loop.SetMode(v1::Policy::MODE_DRY_RUN);
  h.loop.Tick();
  h.loop.Tick();
  EXPECT_EQ(h.executor.page_move_stops, 2);
}

// Dry run changes nothing, so the same plan comes back every tick: it is
// reported each tick but looked up (and logged, and noted) once, until it
// changes or enforce mode ends the series.
TEST(LoopTest, DryRunLooksUpARepeatedPlanOnce) {
  Harness h([](int n) { return MisplacedWorker((n + 1) * kSecond); });
  h.loop.SetMode(v1::Policy::MODE_DRY_RUN);
  TickReport first = h.loop.Tick();
  ASSERT_THAT(first.actions, Not(IsEmpty()));
  size_t looked_up = h.executor.applied.size();
  size_t noted = h.loop.ExplainTask(100).size();
  TickReport second = h.loop.Tick();
  EXPECT_EQ(h.executor.applied.size(), looked_up);
  EXPECT_EQ(h.loop.ExplainTask(100).size(), noted);
  ASSERT_EQ(second.actions.size(), first.actions.size());
  EXPECT_EQ(second.actions[0].result.outcome, Outcome::kDryRun);
  // An enforce tick in between (whose action found its thread gone, so the
  // same plan comes back) ends the series: the next dry run looks again.
  h.executor.outcome = Outcome::kGone;
  h.loop.SetMode(v1::Policy::MODE_ENFORCE);
  h.loop.Tick();
  EXPECT_EQ(h.executor.dry_runs.back(), false);
  h.loop.SetMode(v1::Policy::MODE_DRY_RUN);
  size_t before = h.executor.applied.size();
  h.loop.Tick();
  EXPECT_GT(h.executor.applied.size(), before);
}

// A dry run the actuator refuses is held down like in enforce mode, and
// looked up again when the hold ends: only "would do" repeats unchanged.
TEST(LoopTest, ARefusedDryRunIsHeldDownNotRepeated) {
  Harness h([](int n) { return MisplacedWorker((n + 1) * kSecond); });
  h.policy.policy().mutable_stability()->set_hold_down_s(2);
  h.loop.SetMode(v1::Policy::MODE_DRY_RUN);
  h.executor.dry_run_outcome = Outcome::kForbidden;
  ASSERT_THAT(h.loop.Tick().actions, Not(IsEmpty()));
  size_t looked_up = h.executor.applied.size();
  EXPECT_THAT(h.loop.Tick().actions, IsEmpty()) << "held down";
  for (int i = 0; i < 3; ++i) h.loop.Tick();
  EXPECT_GT(h.executor.applied.size(), looked_up) << "looked up again";
}

TEST(LoopTest, PolicyModeAppliesUntilOverridden) {
  Harness h([](int n) { return MisplacedWorker((n + 1) * kSecond); });
  h.policy.policy().set_mode(v1::Policy::MODE_DRY_RUN);
  EXPECT_EQ(h.loop.mode(), v1::Policy::MODE_DRY_RUN);
  h.loop.SetMode(v1::Policy::MODE_ENFORCE);
  EXPECT_EQ(h.loop.mode(), v1::Policy::MODE_ENFORCE);
}

TEST(LoopTest, FailedCollectionDecidesNothingAndKeepsRunning) {
  Harness h([](int n) -> absl::StatusOr<Snapshot> {
    if (n == 0) return absl::DataLossError("/proc/stat: truncated");
    return MisplacedWorker((n + 1) * kSecond);
  });
  TickReport first = h.loop.Tick();
  EXPECT_EQ(first.collect_status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(first.snapshot, nullptr);
  EXPECT_THAT(h.executor.applied, IsEmpty());
  TickReport second = h.loop.Tick();
  EXPECT_TRUE(second.collect_status.ok());
  EXPECT_THAT(h.executor.applied, Not(IsEmpty()));
}

TEST(LoopTest, RevertsAnActionThatMadeThingsWorseAndHoldsItDown) {
  // After the first tick the worker's faults get worse instead of better:
  // before, half remote; after, all remote.
  Harness h([](int n) {
    Snapshot s = MisplacedWorker((n + 1) * kSecond);
    Target& worker = s.targets[0];
    worker.threads[0].faults = n == 0 ? PerNode<NodeFaults>{{500, 0}, {0, 500}}
                                      : PerNode<NodeFaults>{{0, 0}, {0, 1000}};
    worker.resident_pages = {25'000, 25'000};
    // The pin to node 0 shows in ticks 1-3; the revert puts it back.
    if (n >= 1 && n <= 3) worker.threads[0].allowed_cpus = {0, 1};
    return s;
  });
  TickReport first = h.loop.Tick();
  size_t pins = 0;
  for (const Action& a : first.plan.actions) {
    pins += std::holds_alternative<PinThread>(a.op);
  }
  ASSERT_GT(pins, 0u) << "the scenario must lead to a pin";
  std::vector<RevertRecord> reverts;
  for (int i = 0; i < 4; ++i) {
    TickReport r = h.loop.Tick();
    reverts.insert(reverts.end(), r.reverts.begin(), r.reverts.end());
  }
  ASSERT_THAT(reverts, Not(IsEmpty()));
  EXPECT_TRUE(std::holds_alternative<PinThread>(reverts[0].verdict.action.op));
  EXPECT_GT(reverts[0].verdict.after, reverts[0].verdict.before);
  EXPECT_THAT(h.executor.reverted, Not(IsEmpty()));
  // Held down: no new pin for that worker after the revert.
  TickReport after = h.loop.Tick();
  for (const Action& a : after.plan.actions) {
    EXPECT_FALSE(std::holds_alternative<PinThread>(a.op)) << a.reason;
  }
  bool explained = false;
  for (const Decision& d : h.loop.ExplainTask(100)) {
    explained |= d.what.find("reverted") != std::string::npos;
  }
  EXPECT_TRUE(explained);
}

TEST(LoopTest, AFailedActionIsNotRetriedEveryTick) {
  Harness h([](int n) { return MisplacedWorker((n + 1) * kSecond); });
  h.executor.outcome = Outcome::kForbidden;
  TickReport first = h.loop.Tick();
  ASSERT_THAT(first.actions, Not(IsEmpty()));
  EXPECT_THAT(first.actions[0].result.message, HasSubstr("left alone for"));
  size_t tried = h.executor.applied.size();
  h.loop.Tick();
  TickReport third = h.loop.Tick();
  EXPECT_EQ(h.executor.applied.size(), tried) << "held down after failing";
  // Counted as the plan's defect, for the stream and status.
  EXPECT_EQ(third.forbidden, tried);
  EXPECT_EQ(h.loop.forbidden(), tried);
}

TEST(LoopTest, BacksOffWhatSomeoneElseChanged) {
  Harness h([](int n) { return MisplacedWorker((n + 1) * kSecond); });
  h.executor.external.push_back(ExternalEvent{
      EntityKey{EntityKind::kTask, 100}, "tid 100 affinity changed to 0-3"});
  TickReport report = h.loop.Tick();
  EXPECT_EQ(report.external.size(), 1u);
  for (const Action& a : report.plan.actions) {
    EXPECT_FALSE(std::holds_alternative<PinThread>(a.op)) << a.reason;
  }
  ASSERT_THAT(h.loop.ExplainTask(100), Not(IsEmpty()));
  EXPECT_THAT(h.loop.ExplainTask(100)[0].what, HasSubstr("backed off"));
}

// 2 nodes x 2 CPUs; one worker confined to node 0 with `home_share` of its
// pages there and the rest on node 1.
Snapshot PinnedWorkerMemory(uint64_t now_ns, double home_share) {
  Snapshot s = ::locus::testing::MakeHost(2, 2);
  s.now_ns = now_ns;
  Target worker = ::locus::testing::MakeWorker(s, 100, 0, 0, 1, 50'000);
  worker.resident_pages = {static_cast<uint64_t>(50'000 * home_share),
                           static_cast<uint64_t>(50'000 * (1 - home_share))};
  ::locus::testing::SetFaultsFromPages(worker, 0);
  s.targets = {worker};
  return s;
}

// How many actions of kind Op the tick planned.
template <typename Op>
int Planned(const TickReport& report) {
  int n = 0;
  for (const Action& a : report.plan.actions) {
    n += std::holds_alternative<Op>(a.op);
  }
  return n;
}

TEST(LoopTest, AMigrationUnderWayRunsUntilAPassFindsNothing) {
  // All remote at first; then 80% home, below the threshold (50% remote)
  // that starts a migration, but not done.
  Harness h([](int n) {
    return PinnedWorkerMemory((n + 1) * kSecond, n == 0 ? 0.0 : 0.8);
  });
  EXPECT_EQ(Planned<MigratePages>(h.loop.Tick()), 1);
  EXPECT_EQ(Planned<MigratePages>(h.loop.Tick()), 1);
  // A tick that found nothing mid-pass: the pass goes on.
  h.executor.outcome = Outcome::kUnchanged;
  EXPECT_EQ(Planned<MigratePages>(h.loop.Tick()), 1);
  // A whole pass found nothing: the memory is settled, and 20% remote is
  // below the threshold.
  h.executor.nothing_left = true;
  EXPECT_EQ(Planned<MigratePages>(h.loop.Tick()), 1);
  EXPECT_EQ(Planned<MigratePages>(h.loop.Tick()), 0);
  EXPECT_EQ(Planned<MigratePages>(h.loop.Tick()), 0);
}

// 2 nodes x 2 CPUs; workers 100 on node 1 and 101 on node 0, each with its
// memory home; NET_RX mostly 100's at first (`second` false), then mostly
// 101's; NIC IRQ 40 affine to `irq_cpus`.
Snapshot ConsumersThatFlip(uint64_t now_ns, bool second,
                           std::vector<int> irq_cpus) {
  Snapshot s = ::locus::testing::MakeHost(2, 2);
  s.now_ns = now_ns;
  s.targets = {::locus::testing::MakeWorker(s, 100, 1, 1, 1, 0),
               ::locus::testing::MakeWorker(s, 101, 0, 0, 0, 0)};
  s.targets[0].threads[0].net_rx_softirq_ns = second ? 1'000'000 : 9'000'000;
  s.targets[1].threads[0].net_rx_softirq_ns = second ? 9'000'000 : 1'000'000;
  s.irqs = {::locus::testing::MakeNicIrq(s, 40, "eth0", 0, 0, irq_cpus)};
  return s;
}

// The snapshot shows IRQ 40 spread over both nodes, but someone (irqbalance)
// put it on CPU 1 since: the move takes it from node 0, and when the
// consumers flip back to node 0 a dwell later, hold-down keeps it where it
// is instead of moving it straight back.
TEST(LoopTest, AnIrqIsHeldDownFromTheNodeItWasActuallyTakenFrom) {
  for (bool actuator_saw_cpu1 : {true, false}) {
    SCOPED_TRACE(actuator_saw_cpu1 ? "actuator saw cpu 1" : "not reported");
    Harness h([](int n) {
      return n == 0 ? ConsumersThatFlip(kSecond, false, {0, 1, 2, 3})
                    : ConsumersThatFlip(60 * kSecond, true, {2});
    });
    if (actuator_saw_cpu1) h.executor.cpus_before = {1};
    ASSERT_EQ(Planned<SetIrqAffinity>(h.loop.Tick()), 1);
    TickReport second = h.loop.Tick();
    // Without what the actuator saw, the move counts as taken from several
    // nodes, and nothing stops the move back: the case this guards.
    EXPECT_EQ(Planned<SetIrqAffinity>(second), actuator_saw_cpu1 ? 0 : 1);
  }
}

// Waiting for irqbalance to ban an IRQ is not a failure: the move is
// planned again next tick, not held down.
TEST(LoopTest, AnIrqWaitingForIrqbalanceIsTriedAgainNextTick) {
  Harness h([](int n) {
    return ConsumersThatFlip((n + 1) * kSecond, false, {0, 1, 2, 3});
  });
  h.executor.outcome = Outcome::kWaiting;
  TickReport first = h.loop.Tick();
  ASSERT_EQ(Planned<SetIrqAffinity>(first), 1);
  EXPECT_THAT(first.actions[0].result.message, Not(HasSubstr("left alone")));
  EXPECT_EQ(Planned<SetIrqAffinity>(h.loop.Tick()), 1);
  h.executor.outcome = Outcome::kApplied;
  EXPECT_EQ(Planned<SetIrqAffinity>(h.loop.Tick()), 1);
  EXPECT_EQ(Planned<SetIrqAffinity>(h.loop.Tick()), 0) << "moved once";
  // Every tick tells the neighbours, with the policy's coexist mode, before
  // it acts: the first tick's move finds irqbalance looked for already.
  ASSERT_EQ(h.executor.neighbour_ticks.size(), 4u);
  EXPECT_EQ(h.executor.neighbour_ticks[0], v1::Coexist::IRQBALANCE_MODE_BAN);
  EXPECT_THAT(h.executor.neighbour_ticks_at_apply,
              ::testing::ElementsAre(1u, 2u, 3u));
}

TEST(LoopTest, CountsOverruns) {
  LoopOptions options;
  options.tick = absl::Milliseconds(500);
  // Collecting takes a second on the fake clock: every tick overruns.
  Harness h([](int n) { return MisplacedWorker((n + 1) * kSecond); }, options);
  h.loop.Tick();
  h.loop.Tick();
  EXPECT_EQ(h.loop.overruns(), 2u);
  EXPECT_EQ(h.reports.back().overruns, 2u);
}

TEST(LoopTest, RunStopsWhenAsked) {
  LoopOptions options;
  options.tick = absl::Milliseconds(1);
  Harness h([](int n) { return MisplacedWorker((n + 1) * kSecond); }, options);
  absl::Notification stop;
  h.executor.outcome = Outcome::kUnchanged;
  std::thread runner([&] { h.loop.Run(stop); });
  while (h.loop.ticks() < 3) absl::SleepFor(absl::Milliseconds(1));
  stop.Notify();
  runner.join();
  EXPECT_GE(h.loop.ticks(), 3u);
}

// MisplacedWorker's worker with a second one, confined to node 1 and busy
// for `busy` of the tick, both with a socket of one reuseport group.
Snapshot WithListeners(uint64_t now_ns, double busy = 1.0) {
  Snapshot s = MisplacedWorker(now_ns);
  Target other = testing::MakeWorker(s, 200, 1, 1, 1);
  other.threads[0].runtime_ns = {0, static_cast<uint64_t>(busy * kSecond)};
  s.targets.push_back(other);
  s.listen_groups = {{"netns 1 0.0.0.0:80", 80, {{1100, 100}, {1200, 200}}}};
  return s;
}

TEST(LoopTest, SteersAfterThePinsAndRemembersTheSpillItApplied) {
  // Saturated, then at the threshold (85%) with the spill applied.
  Harness h([](int n) {
    return WithListeners((n + 1) * kSecond, n == 0 ? 1.0 : 0.85);
  });
  h.executor.steering_states = {{.group = "netns 1 0.0.0.0:80",
                                 .steered = true,
                                 .migrates = true,
                                 .sockets = 2,
                                 .problem = "",
                                 .total = {},
                                 .tick = {}}};
  TickReport first = h.loop.Tick();
  ASSERT_EQ(h.executor.steered.size(), 1u);
  ASSERT_EQ(h.executor.steered[0].size(), 1u);
  EXPECT_EQ(first.connections.size(), 1u);
  // Worker 200's socket serves node 1, where it is confined; its node is
  // saturated: it sheds what brings it to 85%.
  const NodeSteering& node1 = h.executor.steered[0][0].nodes[1];
  EXPECT_THAT(node1.inodes, ::testing::ElementsAre(1200u));
  EXPECT_EQ(node1.spill_permille, 150u);
  EXPECT_THAT(h.loop.ExplainTask(200),
              ::testing::Contains(::testing::Field(
                  &Decision::what,
                  HasSubstr("its listening socket in netns 1 0.0.0.0:80 takes "
                            "the new connections received on node 1"))));

  // The next tick starts from the spill applied: at 85% while shedding 15%
  // it would be at 100% without: the spill holds (a memoryless rule would
  // drop it to 0 and overload the node again).
  h.loop.Tick();
  EXPECT_EQ(h.executor.steered[1][0].nodes[1].spill_permille,
            node1.spill_permille);
  // Told once, not every tick.
  int told = 0;
  for (const Decision& d : h.loop.ExplainTask(200)) {
    told += d.what.find("its listening socket") != std::string::npos;
  }
  EXPECT_EQ(told, 1);
}

TEST(LoopTest, DryRunAsksForSteeringToBeLeftOff) {
  Harness h([](int n) { return WithListeners((n + 1) * kSecond); });
  h.policy.policy().set_mode(v1::Policy::MODE_DRY_RUN);
  h.loop.Tick();
  EXPECT_THAT(h.executor.steer_dry_runs, ::testing::ElementsAre(true));
}

// A note that stays is logged once, however the notes beside it change.
TEST(LoopTest, ANoteThatStaysIsLoggedOnce) {
  Harness h([](int n) {
    Snapshot s = WithListeners((n + 1) * kSecond);
    s.listen_groups[0].sockets.resize(1);  // no reuseport: a note each tick
    if (n == 1) s.targets.clear();         // the other notes change
    return s;
  });
  const std::string log = LogOfThreeTicks(h);
  const std::string note = "listens without reuseport on netns 1 0.0.0.0:80";
  ASSERT_THAT(log, HasSubstr(note));
  EXPECT_EQ(log.find(note), log.rfind(note)) << log;
}

}  // namespace
}  // namespace locus

namespace locus {
namespace {

// The soft home through the loop: node 0 stays saturated (hogs, its
// worker waiting 300 ms a second), node 1 has CPU to spare. The loop keeps
// the pressure streaks, widens the worker after sustain_s, and leaves the
// widening alone although its locality reads worse (cross-node migrations
// all the time): it is not judged by the verifier, and it shows in the
// report's homes.
TEST(LoopTest, WidensASaturatedHomeAndDoesNotRevertTheWidening) {
  bool widened = false;
  Harness h([&widened](int n) {
    Snapshot s = testing::MakeHost(2, 2);
    s.now_ns = (n + 1) * kSecond;
    for (CpuSample& cpu : s.cpus) cpu.busy_all = cpu.cpu < 2 ? 1.0 : 0.3;
    Target worker = testing::MakeWorker(s, 100, 0, 0, 0, 1000);
    ThreadSample& thread = worker.threads[0];
    thread.wait_ns = 300'000'000;
    thread.runtime_ns = {300'000'000, 0};
    if (widened) {
      // It runs where it can now, mostly on node 1, moving all the time.
      thread.allowed_cpus = {0, 1, 2, 3};
      thread.runtime_ns = {50'000'000, 600'000'000};
      thread.cpu = 2;
      thread.migrations = 20;
      thread.cross_node_migrations = 20;
      thread.wait_ns = 0;
      // Its memory stayed home: from node 1, most of its faults are remote.
      thread.faults = {{.local = 100, .remote = 900}, {}};
    }
    s.targets = {worker};
    return s;
  });
  int widenings = 0;
  for (int i = 0; i < 12; ++i) {
    TickReport r = h.loop.Tick();
    EXPECT_THAT(r.reverts, IsEmpty()) << "tick " << i;
    for (const Action& a : r.plan.actions) {
      const auto* pin = std::get_if<PinThread>(&a.op);
      if (pin == nullptr || pin->spill_node < 0) continue;
      ++widenings;
      EXPECT_GE(i, 3) << "widened before the pressure lasted 3 s";
      EXPECT_THAT(a.reason, HasSubstr("widened to nodes 0-1"));
      widened = true;
    }
    if (widened) {
      ASSERT_EQ(r.homes.count(100), 1u);
      EXPECT_EQ(r.homes.at(100).node, 0);
      EXPECT_EQ(r.homes.at(100).spill_node, 1);
    }
  }
  EXPECT_EQ(widenings, 1);
  EXPECT_THAT(h.executor.reverted, IsEmpty());
}

}  // namespace
}  // namespace locus
