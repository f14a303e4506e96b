// What users feel, per arm, through the runner: service times, run-queue
// wait and bytes per request, the whole host's figures, the traffic flag,
// and the latency guardrail that stops a treatment whose requests wait
// while its work per CPU-second is unchanged.
#include "agent/experiment/arm_figures.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/experiment/runner_harness.h"

namespace locus::testing {
namespace {

using ::testing::HasSubstr;

// Runs until the experiment ends (at most `ticks` ticks).
v1::ExperimentReport RunOut(Harness& h, int ticks) {
  for (int i = 0;
       i < ticks && h.runner.Get()->state() == v1::EXPERIMENT_STATE_RUNNING;
       ++i) {
    h.Tick();
  }
  return *h.runner.Get();
}

TEST(ArmFiguresTest, ReportsWhatEachArmFeltAndTheWholeHost) {
  Harness h;
  h.Tick();
  v1::StartExperimentRequest request = Request(120, 10);
  request.set_latency_margin(5);  // this test reads, never stops
  ASSERT_TRUE(h.runner.Start(request, v1::Policy::MODE_ENFORCE).ok());
  h.Tick();
  const std::set<int32_t> treated = Treated(*h.runner.Get());
  // Treated requests wait twice as long on the run queue; both arms serve
  // requests of 800 us (median) and the same bytes.
  h.counter.wait = [&](int32_t pid) { return treated.count(pid) ? 2e7 : 1e7; };
  h.counter.service_us = [](int32_t) { return 800.0; };
  const v1::ExperimentReport r = RunOut(h, 130);
  ASSERT_EQ(r.state(), v1::EXPERIMENT_STATE_DONE);

  const v1::ExperimentArmFigures& t = r.treated_figures();
  const v1::ExperimentArmFigures& c = r.control_figures();
  // 50 requests per worker per interval, over the intervals counted.
  EXPECT_GT(c.requests(), 0u);
  EXPECT_EQ(t.requests() % 50, 0u);
  EXPECT_NEAR(c.p50_us(), 800, 800 * 0.06);
  EXPECT_NEAR(c.p99_us(), 800 * 1.49, 800 * 0.06);
  // 10 ms of wait per 0.5 s of CPU (control), twice that treated.
  EXPECT_NEAR(c.wait_per_cpu_second(), 0.02, 0.001);
  EXPECT_NEAR(t.wait_per_cpu_second(), 0.04, 0.002);
  EXPECT_NEAR(t.wait_us_per_request(), 2e7 / 1e3 / 50, 10);
  EXPECT_NEAR(c.bytes_per_request(), 0.5e6 / 50, 300);
  EXPECT_NEAR(c.bytes_per_connection(), 0.5e6 / 100, 150);

  ASSERT_TRUE(r.run_queue_wait().valid()) << r.run_queue_wait().why_not();
  EXPECT_NEAR(r.run_queue_wait().ratio(), 2, 0.05);
  EXPECT_TRUE(r.run_queue_wait().significant());
  ASSERT_TRUE(r.service_p99().valid()) << r.service_p99().why_not();
  EXPECT_NEAR(r.service_p99().ratio(), 1, 0.05);
  EXPECT_NEAR(r.service_p50().ratio(), 1, 0.05);
  EXPECT_EQ(r.service_p99().metric(), "p99_service_time");

  // 8 workers sending 0.5 MB per 10 s interval each; the CPUs 25 % busy.
  EXPECT_NEAR(r.host_bytes_per_second(), 8 * 0.5e6 / 10, 0.4e6 * 0.03);
  EXPECT_DOUBLE_EQ(r.host_cpu_busy(), 0.25);
  EXPECT_FALSE(r.traffic_differs());
  EXPECT_DOUBLE_EQ(r.latency_margin(), 5);
  EXPECT_EQ(r.guardrail(), "");
  EXPECT_EQ(r.service_source(), "fake: the service times the test sets");
}

// The work sensor loads its programs when the experiment starts (seconds on
// a slow host): the host's rate counts from the counters' first read, not
// from the snapshot of the tick that started it.
TEST(ArmFiguresTest, TheHostsRateCountsFromTheFirstRead) {
  Harness h;
  h.counter.clock = &h.now;
  h.counter.on_watch = [&h] { h.now += 5 * kSecond; };
  h.Tick();
  v1::StartExperimentRequest request = Request(60, 10);
  request.set_latency_margin(5);  // this test reads, never stops
  ASSERT_TRUE(h.runner.Start(request, v1::Policy::MODE_ENFORCE).ok());
  h.Tick();
  h.counter.on_watch = [] {};
  const v1::ExperimentReport r = RunOut(h, 70);
  ASSERT_EQ(r.state(), v1::EXPERIMENT_STATE_DONE);
  // 8 workers sending 1e6 / 20 bytes per second each.
  EXPECT_NEAR(r.host_bytes_per_second(), 8 * 1e6 / 20, 0.4e6 * 0.03);
}

TEST(ArmFiguresTest, FlagsArmsWhoseRequestsAreUnlike) {
  Harness h;
  h.Tick();
  ASSERT_TRUE(h.runner.Start(Request(60, 10), v1::Policy::MODE_ENFORCE).ok());
  h.Tick();
  const std::set<int32_t> treated = Treated(*h.runner.Get());
  // The same requests per second, 20 % more bytes in each treated one.
  h.counter.rate = [&](int32_t pid) {
    return treated.count(pid) ? 1.2e6 : 1e6;
  };
  h.counter.service_us = [](int32_t) { return 500.0; };
  const v1::ExperimentReport r = RunOut(h, 70);
  EXPECT_TRUE(r.traffic_differs());
  EXPECT_NEAR(r.treated_figures().bytes_per_request() /
                  r.control_figures().bytes_per_request(),
              1.2, 0.01);
}

TEST(ArmFiguresTest, TheLatencyGuardrailStopsATreatmentWhoseRequestsWait) {
  Harness h;
  h.Tick();
  ASSERT_TRUE(h.runner.Start(Request(600, 10), v1::Policy::MODE_ENFORCE).ok());
  h.Tick();
  const std::set<int32_t> treated = Treated(*h.runner.Get());
  // The same work per CPU-second: only the requests' times tell.
  h.counter.service_us = [&](int32_t pid) {
    return treated.count(pid) ? 1500.0 : 1000.0;
  };
  ArmsThisTick arms;
  for (int i = 0; i < 600 && h.harm.empty(); ++i) arms = h.Tick();
  ASSERT_THAT(h.harm, HasSubstr("latency guardrail"));
  EXPECT_THAT(h.harm, HasSubstr("p99 service time"));
  const v1::ExperimentReport r = *h.runner.Get();
  EXPECT_EQ(r.state(), v1::EXPERIMENT_STATE_GUARDRAIL);
  EXPECT_EQ(r.guardrail(), "latency");
  EXPECT_LT(r.intervals(), 60u);  // early, not at the end
  EXPECT_NEAR(r.service_p99().ratio(), 1.5, 0.08);
  EXPECT_FALSE(r.work().significant());
  EXPECT_THAT(r.verdict(), HasSubstr("treated requests waited longer"));
  EXPECT_EQ(std::set<int32_t>(arms.release.begin(), arms.release.end()),
            treated);
}

TEST(ArmFiguresTest, AWaitWithinTheMarginDoesNotStopIt) {
  Harness h;
  h.Tick();
  ASSERT_TRUE(h.runner.Start(Request(120, 10), v1::Policy::MODE_ENFORCE).ok());
  h.Tick();
  const std::set<int32_t> treated = Treated(*h.runner.Get());
  // 5 % longer: real, and under the default 10 % margin.
  h.counter.service_us = [&](int32_t pid) {
    return treated.count(pid) ? 1050.0 : 1000.0;
  };
  h.counter.wait = [&](int32_t pid) {
    return treated.count(pid) ? 1.05e7 : 1e7;
  };
  const v1::ExperimentReport r = RunOut(h, 130);
  EXPECT_EQ(r.state(), v1::EXPERIMENT_STATE_DONE);
  EXPECT_TRUE(h.harm.empty()) << h.harm;
  EXPECT_LT(r.latency_guardrail_p(), 1);  // it looked
}

TEST(ArmFiguresTest, StartRefusesAMarginThatIsNotAFraction) {
  Harness h;
  h.Tick();
  v1::StartExperimentRequest request = Request(120, 10);
  request.set_latency_margin(-0.1);
  absl::StatusOr<v1::ExperimentReport> started =
      h.runner.Start(request, v1::Policy::MODE_ENFORCE);
  ASSERT_FALSE(started.ok());
  EXPECT_THAT(started.status().message(), HasSubstr("latency_margin"));
  request.set_latency_margin(std::nan(""));
  EXPECT_FALSE(h.runner.Start(request, v1::Policy::MODE_ENFORCE).ok());
}

// A request without a margin takes the policy's (the daemon passes
// experiment.latency_margin), one with a margin keeps its own; the policy's
// margin is what the guardrail then looks with.
TEST(ArmFiguresTest, TheMarginIsTheRequestsElseThePolicys) {
  Harness h;
  h.Tick();
  v1::StartExperimentRequest request = Request(120, 10);
  ASSERT_TRUE(h.runner.Start(request, v1::Policy::MODE_ENFORCE, 0.3).ok());
  h.Tick();
  EXPECT_DOUBLE_EQ(h.runner.Get()->latency_margin(), 0.3);
  ASSERT_TRUE(h.runner.Stop({}).ok());
  RunOut(h, 3);
  ASSERT_NE(h.runner.Get()->state(), v1::EXPERIMENT_STATE_RUNNING);
  request.set_latency_margin(0.05);
  ASSERT_TRUE(h.runner.Start(request, v1::Policy::MODE_ENFORCE, 0.3).ok());
  h.Tick();
  EXPECT_DOUBLE_EQ(h.runner.Get()->latency_margin(), 0.05);
}

// Where each arm's new connections arrived, from connection steering's
// count per node: only steered groups, from the draw on, in a note once an
// interval is measured ("not counted" where nothing was steered).
TEST(ArmFiguresTest, SaysWhereEachArmsConnectionsArrived) {
  auto sources = [](const v1::ExperimentReport& r) {
    std::string out;
    for (const std::string& note : r.notes())
      if (note.find("new connections by the node") == 0) out = note;
    return out;
  };
  auto group = [](bool steered, int control0, int rest0, int control1) {
    SteeringState g;
    g.steered = steered;
    g.tick[0] = {.local = static_cast<uint64_t>(rest0 - 1),
                 .spilled = 1,
                 .control = static_cast<uint64_t>(control0)};
    g.tick[1] = {.local = 2, .control = static_cast<uint64_t>(control1)};
    return g;
  };
  Harness h;
  h.Tick();
  h.runner.OnConnections({group(true, 50, 50, 50)});  // before the draw
  ASSERT_TRUE(h.runner.Start(Request(60, 10), v1::Policy::MODE_ENFORCE).ok());
  h.Tick();
  EXPECT_EQ(sources(*h.runner.Get()), "");  // nothing measured yet
  h.runner.OnConnections({group(true, 3, 7, 2), group(false, 90, 90, 90)});
  for (int i = 0; i < 10; ++i) h.Tick();
  EXPECT_EQ(
      sources(*h.runner.Get()),
      "new connections by the node that received them, since the "
      "treatment began: treated node 0 7 (78 %), node 1 2 (22 %); control "
      "node 0 3 (60 %), node 1 2 (40 %)");

  Harness unsteered;
  unsteered.Tick();
  ASSERT_TRUE(
      unsteered.runner.Start(Request(60, 10), v1::Policy::MODE_ENFORCE).ok());
  unsteered.runner.OnConnections({group(false, 3, 7, 2)});
  for (int i = 0; i < 11; ++i) unsteered.Tick();
  EXPECT_THAT(sources(*unsteered.runner.Get()), HasSubstr("not counted"));
}

}  // namespace
}  // namespace locus::testing
