// The experiment runner over a fake work counter, tick by tick: the arms,
// the intervals, the estimate and verdict, the guardrail, units that come
// and go, and what the record keeps across a crash.
#include "agent/experiment/runner.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>

#include "absl/strings/str_join.h"
#include "agent/experiment/record.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "policy/decide.h"
#include "policy/default_policy.h"
#include "policy/experiment_plan.h"
#include "tests/common/snapshot_builder.h"
#include "tests/experiment/runner_harness.h"

namespace locus::testing {
namespace {

using google::protobuf::util::TimeUtil;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST(ExperimentRunnerTest, RefusesWhatCannotRun) {
  Harness h;
  EXPECT_EQ(h.runner.Get().status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(h.runner.Stop({}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  absl::StatusOr<v1::ExperimentReport> dry =
      h.runner.Start(Request(60, 10), v1::Policy::MODE_DRY_RUN);
  EXPECT_EQ(dry.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(dry.status().message(), HasSubstr("dry run"));
  EXPECT_EQ(
      h.runner.Start(Request(15, 10), v1::Policy::MODE_ENFORCE).status().code(),
      absl::StatusCode::kInvalidArgument);  // fewer than two intervals
  h.Tick(/*workers=*/3);
  absl::StatusOr<v1::ExperimentReport> few =
      h.runner.Start(Request(60, 10), v1::Policy::MODE_ENFORCE);
  EXPECT_EQ(few.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(few.status().message(), HasSubstr("sees 3"));
  h.Tick();
  ASSERT_TRUE(h.runner.Start(Request(60, 10), v1::Policy::MODE_ENFORCE).ok());
  EXPECT_EQ(
      h.runner.Start(Request(60, 10), v1::Policy::MODE_ENFORCE).status().code(),
      absl::StatusCode::kFailedPrecondition);  // twice
}

// Durations that overflowed nanoseconds or 32-bit interval counts (a 100 s
// experiment from --duration=18446744174s, 0 intervals planned from
// 4294967296s of 1 s) are refused before any arithmetic, as are negative
// ones and those protobuf itself calls invalid.
TEST(ExperimentRunnerTest, RefusesDurationsOutOfRange) {
  Harness h;
  h.Tick();
  auto refused = [&](const v1::StartExperimentRequest& request) {
    absl::StatusOr<v1::ExperimentReport> r =
        h.runner.Start(request, v1::Policy::MODE_ENFORCE);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
        << request.ShortDebugString();
    return std::string(r.status().message());
  };
  EXPECT_THAT(refused(Request(18446744174, 10)),
              HasSubstr("duration of 18446744174 s is longer than the "
                        "longest Locus runs, 30 days"));
  EXPECT_THAT(refused(Request(4294967296, 1)), HasSubstr("30 days"));
  EXPECT_THAT(refused(Request(60, 4294967296)), HasSubstr("interval of"));
  EXPECT_THAT(refused(Request(-60, 10)), HasSubstr("0 or more"));
  v1::StartExperimentRequest bad_nanos = Request(60, 10);
  bad_nanos.mutable_duration()->set_nanos(1'000'000'000);
  EXPECT_THAT(refused(bad_nanos), HasSubstr("0 or more"));
  v1::StartExperimentRequest long_pre = Request(60, 10);
  long_pre.mutable_pre()->set_seconds(experiment::kMaxExperimentSeconds + 1);
  EXPECT_THAT(refused(long_pre), HasSubstr("pre-period of"));
  // 30 days exactly is a plan, not an overflow.
  EXPECT_TRUE(h.runner
                  .Start(Request(experiment::kMaxExperimentSeconds, 10),
                         v1::Policy::MODE_ENFORCE)
                  .ok());
}

TEST(ExperimentRunnerTest, SplitsTheWorkersAndPutsTheControlArmBack) {
  Harness h;
  h.Tick();
  ASSERT_TRUE(h.runner.Start(Request(60, 10), v1::Policy::MODE_ENFORCE).ok());
  ArmsThisTick arms = h.Tick();
  ASSERT_NE(arms.report, nullptr);
  EXPECT_EQ(arms.report->state(), v1::EXPERIMENT_STATE_RUNNING);
  EXPECT_EQ(arms.report->treated(), 4u);
  EXPECT_EQ(arms.report->control(), 4u);
  EXPECT_THAT(arms.untreated, SizeIs(4));
  EXPECT_THAT(arms.release, SizeIs(4));
  for (int32_t pid : arms.release) EXPECT_TRUE(arms.untreated.contains(pid));
  EXPECT_THAT(h.counter.watched, SizeIs(8));
  // Two of each arm on each node.
  absl::StatusOr<v1::ExperimentReport> report = h.runner.Get();
  ASSERT_TRUE(report.ok());
  int treated_on[2] = {0, 0};
  for (const v1::ExperimentUnit& unit : report->units()) {
    if (unit.arm() == v1::EXPERIMENT_ARM_TREATED)
      ++treated_on[unit.stratum_node()];
  }
  EXPECT_EQ(treated_on[0], 2);
  EXPECT_EQ(treated_on[1], 2);
  // Released once only.
  EXPECT_THAT(h.Tick().release, IsEmpty());
}

// Without the threads lever the treated arm's pins are put back as well,
// and the report names the levers; an unknown one is refused at start.
TEST(ExperimentRunnerTest, LeversWithoutThreadsPutEveryWorkerBack) {
  Harness h;
  h.Tick();
  v1::StartExperimentRequest request = Request(60, 10);
  request.add_levers("connections");
  request.add_levers("pages");
  ASSERT_TRUE(h.runner.Start(request, v1::Policy::MODE_ENFORCE).ok());
  ArmsThisTick arms = h.Tick();
  EXPECT_THAT(arms.untreated, SizeIs(4));
  EXPECT_THAT(arms.release, SizeIs(8));
  EXPECT_FALSE(arms.levers.threads);
  EXPECT_TRUE(arms.levers.pages);
  EXPECT_TRUE(arms.levers.connections);
  EXPECT_THAT(h.runner.Get()->levers(), ElementsAre("pages", "connections"));

  Harness all;
  all.Tick();
  ASSERT_TRUE(all.runner.Start(Request(60, 10), v1::Policy::MODE_ENFORCE).ok());
  EXPECT_TRUE(all.Tick().levers.threads);
  EXPECT_THAT(all.runner.Get()->levers(),
              ElementsAre("threads", "pages", "irqs", "connections"));

  Harness bad;
  bad.Tick();
  request.add_levers("cpus");
  absl::StatusOr<v1::ExperimentReport> refused =
      bad.runner.Start(request, v1::Policy::MODE_ENFORCE);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("no lever 'cpus'"));
}

// The strata are the homes placement would give, not the node each
// unpinned worker happens to run on when the arms are drawn: with all eight
// running (and their memory) on node 0, spread gives each node four homes,
// and each node's four hold two of each arm.
TEST(ExperimentRunnerTest, TheStrataAreTheHomesPlacementGives) {
  Harness h;
  PolicyState policy = Policy();
  policy.policy = std::make_shared<const v1::Policy>(DefaultPolicy());
  auto tick = [&] {
    h.now += kSecond;
    Snapshot s = MakeHost(2, 2);
    s.now_ns = h.now;
    for (int i = 0; i < 8; ++i) {
      Target t = MakeWorker(s, 101 + i, 0, -1, 0);
      t.instance = 100;
      s.targets.push_back(t);
    }
    h.runner.OnTick(s, v1::Policy::MODE_ENFORCE, policy, History());
  };
  tick();
  ASSERT_TRUE(h.runner.Start(Request(60, 10), v1::Policy::MODE_ENFORCE).ok());
  tick();
  const v1::ExperimentReport report = *h.runner.Get();
  int units_on[2] = {0, 0}, treated_on[2] = {0, 0};
  for (const v1::ExperimentUnit& unit : report.units()) {
    ASSERT_GE(unit.stratum_node(), 0);
    ASSERT_LT(unit.stratum_node(), 2);
    ++units_on[unit.stratum_node()];
    if (unit.arm() == v1::EXPERIMENT_ARM_TREATED)
      ++treated_on[unit.stratum_node()];
  }
  EXPECT_EQ(units_on[0], 4);
  EXPECT_EQ(units_on[1], 4);
  EXPECT_EQ(treated_on[0], 2);
  EXPECT_EQ(treated_on[1], 2);
}

// A worker that joins later (a reload's) is stratified as the first ones
// were: by the home placement gives it, not by where it runs when it
// appears.
TEST(ExperimentRunnerTest, ALateWorkersStratumIsItsHomeToo) {
  PolicyState policy = Policy();
  policy.policy = std::make_shared<const v1::Policy>(DefaultPolicy());
  bool home_elsewhere = false;  // the case where the two differ occurs
  for (int runs_on : {0, 1}) {
    SCOPED_TRACE(runs_on);
    Harness h;
    auto tick = [&](bool joined) {
      h.now += kSecond;
      Snapshot s = MakeHost(2, 2);
      s.now_ns = h.now;
      for (int i = 0; i < (joined ? 9 : 8); ++i) {
        Target t = MakeWorker(s, 101 + i, i < 8 ? 0 : runs_on, -1, 0);
        t.instance = 100;
        s.targets.push_back(t);
      }
      h.runner.OnTick(s, v1::Policy::MODE_ENFORCE, policy, History());
      return s;
    };
    tick(false);
    ASSERT_TRUE(h.runner.Start(Request(60, 10), v1::Policy::MODE_ENFORCE).ok());
    tick(false);
    const Snapshot s = tick(true);
    const auto homes = HomesOf(s, *policy.policy, History());
    ASSERT_TRUE(homes.contains(109));
    home_elsewhere |= homes.at(109) != runs_on;
    const v1::ExperimentReport report = *h.runner.Get();
    ASSERT_EQ(report.units_size(), 9);
    EXPECT_EQ(report.units(8).pid(), 109);
    EXPECT_EQ(report.units(8).stratum_node(), homes.at(109));
  }
  EXPECT_TRUE(home_elsewhere);
}

// The treated arm on the soft home: its ticks confined to the home node,
// then widened beyond it; a worker not yet pinned (all CPUs) is neither,
// and the control arm is never counted.
TEST(ExperimentRunnerTest, CountsTheTreatedArmsTicksWidenedBeyondHome) {
  Harness h;
  h.Tick();
  ASSERT_TRUE(h.runner.Start(Request(60, 10), v1::Policy::MODE_ENFORCE).ok());
  h.Tick();  // the arms drawn: nobody pinned yet
  const std::set<int32_t> treated = Treated(*h.runner.Get());
  ASSERT_THAT(treated, SizeIs(4));
  auto tick = [&](bool widened) {
    h.now += kSecond;
    Snapshot s = Host(h.now);
    for (Target& t : s.targets) {
      const int home = (t.pid - 101) % 2;
      // Control workers confined too: only the treated arm counts.
      t.threads[0].allowed_cpus =
          widened && treated.contains(t.pid) ? AllCpus(s) : NodeCpus(s, home);
    }
    h.runner.OnTick(s, v1::Policy::MODE_ENFORCE, Policy(), History());
  };
  for (int i = 0; i < 3; ++i) tick(false);
  tick(true);
  const v1::ExperimentReport report = *h.runner.Get();
  EXPECT_EQ(report.treated_confined_ticks(), 12u);
  EXPECT_EQ(report.treated_widened_ticks(), 4u);
}

TEST(ExperimentRunnerTest, FindsATrueGainAndEndsWithEveryWorkerBack) {
  Harness h;
  h.Tick();
  ASSERT_TRUE(h.runner.Start(Request(120, 10), v1::Policy::MODE_ENFORCE).ok());
  h.Tick();
  const std::set<int32_t> treated = Treated(*h.runner.Get());
  h.counter.rate = [&](int32_t pid) {
    return treated.count(pid) ? 1.1e6 : 1e6;
  };
  ArmsThisTick last;
  for (int i = 0;
       i < 130 && h.runner.Get()->state() == v1::EXPERIMENT_STATE_RUNNING;
       ++i) {
    last = h.Tick();
  }
  absl::StatusOr<v1::ExperimentReport> report = h.runner.Get();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->state(), v1::EXPERIMENT_STATE_DONE);
  EXPECT_GE(report->intervals(), 11u);
  EXPECT_TRUE(report->work().significant());
  EXPECT_NEAR(report->work().ratio(), 1.1, 0.01);
  EXPECT_LT(report->work().low(), 1.1);
  EXPECT_GT(report->work().high(), 1.1);
  EXPECT_THAT(report->verdict(), HasSubstr("Locus: +10."));
  EXPECT_TRUE(report->connections_fair());
  EXPECT_THAT(report->series(), SizeIs(report->intervals()));
  // The tick it ended reports it, and leaves nobody out.
  ASSERT_NE(last.report, nullptr);
  EXPECT_EQ(last.report->state(), v1::EXPERIMENT_STATE_DONE);
  EXPECT_THAT(last.untreated, IsEmpty());
  EXPECT_EQ(h.counter.stops, 1);
  ArmsThisTick after = h.Tick();
  EXPECT_EQ(after.report, nullptr);
  EXPECT_THAT(after.untreated, IsEmpty());
}

TEST(ExperimentRunnerTest, TheGuardrailStopsAHarmfulTreatmentAndPutsItBack) {
  Harness h;
  h.Tick();
  ASSERT_TRUE(h.runner.Start(Request(600, 10), v1::Policy::MODE_ENFORCE).ok());
  h.Tick();
  const std::set<int32_t> treated = Treated(*h.runner.Get());
  h.counter.rate = [&](int32_t pid) {
    return treated.count(pid) ? 0.7e6 : 1e6;
  };
  ArmsThisTick arms;
  for (int i = 0; i < 600 && h.harm.empty(); ++i) arms = h.Tick();
  ASSERT_THAT(h.harm, HasSubstr("guardrail"));
  EXPECT_EQ(h.runner.Get()->state(), v1::EXPERIMENT_STATE_GUARDRAIL);
  EXPECT_LT(h.runner.Get()->intervals(), 60u);  // early, not at the end
  // That tick leaves every unit alone and puts the treated ones back.
  EXPECT_THAT(arms.untreated, SizeIs(8));
  EXPECT_EQ(std::set<int32_t>(arms.release.begin(), arms.release.end()),
            treated);
}

TEST(ExperimentRunnerTest, AnAaExperimentTreatsNobody) {
  Harness h;
  h.Tick();
  ASSERT_TRUE(
      h.runner.Start(Request(60, 10, /*aa=*/true), v1::Policy::MODE_ENFORCE)
          .ok());
  ArmsThisTick arms = h.Tick();
  EXPECT_THAT(arms.untreated, SizeIs(8));
  EXPECT_THAT(arms.release, SizeIs(8));
  // Workers confined by someone else, then widened: with no arm treated the
  // soft home's count has nothing to say.
  for (int i = 0; i < 70; ++i) {
    h.now += kSecond;
    Snapshot s = Host(h.now);
    for (Target& t : s.targets) {
      t.threads[0].allowed_cpus =
          i < 10 ? NodeCpus(s, (t.pid - 101) % 2) : AllCpus(s);
    }
    h.runner.OnTick(s, v1::Policy::MODE_ENFORCE, Policy(), History());
  }
  absl::StatusOr<v1::ExperimentReport> report = h.runner.Get();
  EXPECT_EQ(report->state(), v1::EXPERIMENT_STATE_DONE);
  EXPECT_EQ(report->treated_confined_ticks(), 0u);
  EXPECT_EQ(report->treated_widened_ticks(), 0u);
  EXPECT_TRUE(report->aa());
  EXPECT_THAT(report->verdict(), HasSubstr("A/A"));
  EXPECT_TRUE(h.harm.empty());
}

TEST(ExperimentRunnerTest, AWorkerThatExitsIsLostAndANewOneJoins) {
  Harness h;
  h.Tick();
  ASSERT_TRUE(h.runner.Start(Request(120, 10), v1::Policy::MODE_ENFORCE).ok());
  h.Tick();
  for (int i = 0; i < 12; ++i) h.Tick();
  // Worker 108 exits; a reload's new worker 109 appears.
  h.counter.gone.insert(108);
  h.now += kSecond;
  Snapshot s = Host(h.now, 7);
  Target fresh = MakeWorker(s, 109, 1, -1, 1);
  fresh.instance = 100;
  s.targets.push_back(fresh);
  ArmsThisTick arms =
      h.runner.OnTick(s, v1::Policy::MODE_ENFORCE, Policy(), History());
  absl::StatusOr<v1::ExperimentReport> report = h.runner.Get();
  bool lost = false, joined = false;
  for (const v1::ExperimentUnit& unit : report->units()) {
    if (unit.pid() == 108) lost = !unit.active();
    if (unit.pid() == 109) {
      joined = unit.active();
      EXPECT_EQ(arms.untreated.contains(109),
                unit.arm() == v1::EXPERIMENT_ARM_CONTROL);
    }
  }
  EXPECT_TRUE(lost);
  EXPECT_TRUE(joined);
  EXPECT_TRUE(h.counter.watched.count(109));
  EXPECT_THAT(absl::StrJoin(report->notes(), "\n"), HasSubstr("108"));
  EXPECT_THAT(absl::StrJoin(report->notes(), "\n"), HasSubstr("joined"));
}

TEST(ExperimentRunnerTest, StopDryRunAndPolicyReloadEndOrNoteIt) {
  Harness h;
  h.Tick();
  ASSERT_TRUE(h.runner.Start(Request(600, 10), v1::Policy::MODE_ENFORCE).ok());
  h.Tick();
  for (int i = 0; i < 11; ++i) h.Tick();
  h.Tick(8, /*policy_version=*/2);
  v1::StopExperimentRequest stop;
  stop.set_reason(std::string(10000, 'x'));
  ASSERT_TRUE(h.runner.Stop(stop).ok());
  ArmsThisTick arms = h.Tick();
  ASSERT_NE(arms.report, nullptr);
  EXPECT_EQ(arms.report->state(), v1::EXPERIMENT_STATE_STOPPED);
  EXPECT_THAT(absl::StrJoin(h.runner.Get()->notes(), "\n"),
              HasSubstr("policy reloaded"));
  // A caller's reason is kept to a few hundred bytes, however long it was.
  EXPECT_LT(h.runner.Get()->reason().size(), 400u);
  EXPECT_THAT(h.runner.Get()->reason(), HasSubstr("(+9744 bytes)"));

  ASSERT_TRUE(h.runner.Start(Request(600, 10), v1::Policy::MODE_ENFORCE).ok());
  h.Tick();
  h.now += kSecond;
  h.runner.OnTick(Host(h.now), v1::Policy::MODE_DRY_RUN, Policy(), History());
  EXPECT_EQ(h.runner.Get()->state(), v1::EXPERIMENT_STATE_ABORTED);
  EXPECT_THAT(h.runner.Get()->reason(), HasSubstr("dry run"));
}

// The first intervals after a worker's arm is set are left out of its
// totals and counted; before the planned end the verdict is "running, not
// conclusive", and a stop then is inconclusive, unless the interval valid
// at any look excluded 0.
// Whatever the grid (a duration that is no whole number of intervals), a
// run that ends DONE reports the fixed interval, not the confidence
// sequence shown before its end.
TEST(ExperimentRunnerTest, TheEndReportsTheFixedInterval) {
  Harness h;
  h.Tick();
  ASSERT_TRUE(h.runner.Start(Request(95, 10), v1::Policy::MODE_ENFORCE).ok());
  for (int i = 0; i < 120; ++i) {
    h.Tick();
    if (h.runner.Get()->state() == v1::EXPERIMENT_STATE_DONE) break;
  }
  absl::StatusOr<v1::ExperimentReport> report = h.runner.Get();
  ASSERT_EQ(report->state(), v1::EXPERIMENT_STATE_DONE) << report->reason();
  EXPECT_EQ(report->planned(), 9u);
  const v1::ExperimentEstimate& work = report->work();
  ASSERT_TRUE(work.valid()) << work.why_not();
  // The sequence is wider than the fixed interval; the end shows the latter.
  EXPECT_LT(work.sequence_low(), work.low());
  EXPECT_GT(work.sequence_high(), work.high());
  EXPECT_NEAR(std::log(work.high()) - work.log_ratio(),
              work.log_ratio() - std::log(work.low()), 1e-9);
}

TEST(ExperimentRunnerTest, BurnInIsLeftOutAndAnEarlyStopIsInconclusive) {
  Harness h;
  h.Tick();
  v1::StartExperimentRequest request = Request(600, 10);
  request.set_burn_in(3);
  ASSERT_TRUE(h.runner.Start(request, v1::Policy::MODE_ENFORCE).ok());
  for (int i = 0; i < 101; ++i) h.Tick();
  absl::StatusOr<v1::ExperimentReport> report = h.runner.Get();
  ASSERT_EQ(report->intervals(), 10u);
  EXPECT_EQ(report->planned(), 60u);
  EXPECT_EQ(report->burn_in(), 3u);
  EXPECT_EQ(report->burned_intervals(), 8u * 3);
  for (const v1::ExperimentUnit& unit : report->units())
    EXPECT_EQ(unit.intervals(), 7u);
  // What a fleet pools: per (instance, node) and arm, n and sums.
  ASSERT_THAT(report->cells(), SizeIs(4));
  uint32_t workers = 0;
  for (const v1::ExperimentCell& cell : report->cells()) {
    workers += cell.n();
    EXPECT_NEAR(cell.cpu_seconds(), cell.n() * 7 * 0.5, 1e-9);
    EXPECT_NEAR(cell.log_ratio(), std::log(1e6), 0.05);
  }
  EXPECT_EQ(workers, 8u);
  EXPECT_GT(report->work().se(), 0);
  EXPECT_THAT(report->verdict(), HasSubstr("running, not conclusive"));
  EXPECT_FALSE(report->work().significant());
  EXPECT_EQ(report->work().low(), report->work().sequence_low());
  EXPECT_EQ(report->work_per_worker().estimator(), "equal-weight");
  EXPECT_EQ(report->work().estimator(), "ratio of totals");
  EXPECT_GT(report->guardrail_z(), 2);
  ASSERT_TRUE(h.runner.Stop({}).ok());
  h.Tick();
  EXPECT_THAT(h.runner.Get()->verdict(),
              HasSubstr("inconclusive (stopped at 10 of 60 intervals)"));

  // A large gain crosses the sequence early: conclusive, even when stopped.
  Harness gain;
  gain.Tick();
  ASSERT_TRUE(
      gain.runner.Start(Request(600, 10), v1::Policy::MODE_ENFORCE).ok());
  gain.Tick();
  const std::set<int32_t> treated = Treated(*gain.runner.Get());
  gain.counter.rate = [&](int32_t pid) {
    return treated.count(pid) ? 1.3e6 : 1e6;
  };
  for (int i = 0; i < 100; ++i) gain.Tick();
  EXPECT_GT(gain.runner.Get()->conclusive_at(), 0u);
  ASSERT_TRUE(gain.runner.Stop({}).ok());
  gain.Tick();
  EXPECT_THAT(gain.runner.Get()->verdict(), HasSubstr("Locus: +29.8 %"));
  EXPECT_THAT(gain.runner.Get()->verdict(),
              HasSubstr("conclusive at interval"));
}

// A pre-period treats nobody; then each worker's pre-period ratio takes
// its persistent difference out of the estimate (CUPED).
TEST(ExperimentRunnerTest, APrePeriodTreatsNobodyThenAdjustsTheEstimate) {
  Harness h;
  h.Tick();
  v1::StartExperimentRequest request = Request(120, 10);
  *request.mutable_pre() = TimeUtil::SecondsToDuration(60);
  ASSERT_TRUE(h.runner.Start(request, v1::Policy::MODE_ENFORCE).ok());
  ArmsThisTick arms = h.Tick();
  EXPECT_THAT(arms.untreated, SizeIs(8));
  const std::set<int32_t> treated = Treated(*h.runner.Get());
  // Workers differ by up to 60 % and keep their difference; treated ones
  // gain 5 % once treated.
  bool pre = true;
  h.counter.rate = [&](int32_t pid) {
    const double own = 1e6 * (1 + 0.2 * (pid % 4));
    return !pre && treated.count(pid) ? 1.05 * own : own;
  };
  for (int i = 0; i < 59; ++i) arms = h.Tick();
  EXPECT_THAT(arms.untreated, SizeIs(8));
  EXPECT_EQ(h.runner.Get()->pre_intervals(), 5u);
  EXPECT_EQ(h.runner.Get()->intervals(), 0u);
  arms = h.Tick();  // the pre-period's last interval, and its end
  pre = false;
  EXPECT_EQ(h.runner.Get()->pre_intervals(), 6u);
  EXPECT_THAT(arms.untreated, SizeIs(4));
  for (int i = 0;
       i < 130 && h.runner.Get()->state() == v1::EXPERIMENT_STATE_RUNNING; ++i)
    h.Tick();
  absl::StatusOr<v1::ExperimentReport> report = h.runner.Get();
  EXPECT_EQ(report->state(), v1::EXPERIMENT_STATE_DONE);
  EXPECT_EQ(report->intervals(), 12u);
  EXPECT_EQ(report->pre().seconds(), 60);
  ASSERT_TRUE(report->work().valid()) << report->work().why_not();
  EXPECT_TRUE(report->work().adjusted());
  EXPECT_GT(report->work().variance_reduction(), 0.5);
  EXPECT_NEAR(report->work().ratio(), 1.05, 0.01);
  EXPECT_TRUE(report->work().significant());
}

// --min-effect sizes the duration from this host's last experiment, or is
// refused with what it could detect.
TEST(ExperimentRunnerTest, AMinimumEffectSizesTheDurationFromTheLastRun) {
  Harness h;
  h.Tick();
  v1::StartExperimentRequest request;
  request.set_seed(42);
  request.set_min_effect(0.05);
  absl::StatusOr<v1::ExperimentReport> refused =
      h.runner.Start(request, v1::Policy::MODE_ENFORCE);
  EXPECT_THAT(refused.status().message(), HasSubstr("run an A/A"));
  ASSERT_TRUE(
      h.runner.Start(Request(60, 10, /*aa=*/true), v1::Policy::MODE_ENFORCE)
          .ok());
  for (int i = 0; i < 70; ++i) h.Tick();
  const double detectable = h.runner.Get()->work().detectable();
  ASSERT_GT(detectable, 0.001);
  ASSERT_LT(detectable, 0.05);
  request.set_min_effect(detectable / 2);
  refused = h.runner.Start(request, v1::Policy::MODE_ENFORCE);
  EXPECT_THAT(refused.status().message(), HasSubstr("could detect"));
  request.set_min_effect(0.05);
  ASSERT_TRUE(h.runner.Start(request, v1::Policy::MODE_ENFORCE).ok());
  h.Tick();
  absl::StatusOr<v1::ExperimentReport> report = h.runner.Get();
  EXPECT_EQ(report->min_effect(), 0.05);
  EXPECT_LE(report->planned_detectable(), 0.05);
  // The least that reaches 5 %: two intervals after the burn-in.
  EXPECT_EQ(report->duration().seconds(), 40);
}

// The last run's noise is of its time, not its count of intervals: at
// twice the interval, the same effect needs half the intervals.
TEST(ExperimentRunnerTest, AMinimumEffectIsSizedInTimeWhateverTheInterval) {
  Harness h;
  h.Tick();
  ASSERT_TRUE(
      h.runner.Start(Request(60, 10, /*aa=*/true), v1::Policy::MODE_ENFORCE)
          .ok());
  for (int i = 0; i < 70; ++i) h.Tick();
  const absl::StatusOr<v1::ExperimentReport> aa = h.runner.Get();
  ASSERT_EQ(aa->intervals() - aa->burn_in(), 4u);
  v1::StartExperimentRequest request;
  request.set_seed(42);
  // What the A/A's 40 counted seconds resolved: 2 intervals of 20 s.
  request.set_min_effect(aa->work().detectable() * 1.001);
  *request.mutable_interval() = TimeUtil::SecondsToDuration(20);
  ASSERT_TRUE(h.runner.Start(request, v1::Policy::MODE_ENFORCE).ok());
  h.Tick();
  EXPECT_EQ(h.runner.Get()->duration().seconds(), (2 + 2) * 20);
}

TEST(ExperimentRunnerTest, TheRecordTellsACrashFromAStop) {
  const std::string dir = ::testing::TempDir() + "/runner_record";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/journal.experiment";
  {
    Harness h(path);
    h.Tick();
    ASSERT_TRUE(
        h.runner.Start(Request(600, 10), v1::Policy::MODE_ENFORCE).ok());
    h.Tick();
    // The arms are on disk before the first tick returns.
    absl::StatusOr<std::optional<v1::ExperimentReport>> record =
        ReadExperimentRecord(path);
    ASSERT_TRUE(record.ok() && record->has_value());
    EXPECT_EQ((*record)->state(), v1::EXPERIMENT_STATE_RUNNING);
    EXPECT_THAT((*record)->units(), SizeIs(8));
    for (int i = 0; i < 25; ++i) h.Tick();
  }  // gone without End: a crash
  Harness again(path);
  again.runner.LoadRecord();
  absl::StatusOr<v1::ExperimentReport> last = again.runner.Get();
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->state(), v1::EXPERIMENT_STATE_INTERRUPTED);
  EXPECT_GE(last->intervals(), 2u);
  EXPECT_THAT(last->reason(), HasSubstr("crash"));

  // SIGTERM mid-run: interrupted, said so.
  again.Tick();
  ASSERT_TRUE(
      again.runner.Start(Request(600, 10), v1::Policy::MODE_ENFORCE).ok());
  again.Tick();
  again.runner.Interrupt("the agent was stopped");
  EXPECT_EQ(again.runner.Get()->state(), v1::EXPERIMENT_STATE_INTERRUPTED);
  EXPECT_EQ((*ReadExperimentRecord(path))->state(),
            v1::EXPERIMENT_STATE_INTERRUPTED);

  // A record that is not one is an error, not a crash.
  ASSERT_EQ(truncate(path.c_str(), 3), 0);
  EXPECT_FALSE(ReadExperimentRecord(path).ok());
  EXPECT_FALSE(ReadExperimentRecord(dir).ok());  // a directory
  EXPECT_FALSE(ReadExperimentRecord(dir + "/none").value().has_value());
}

}  // namespace
}  // namespace locus::testing
