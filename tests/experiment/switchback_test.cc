// A switchback over a fake work counter, tick by tick: the whole host is
// put back for each off block and acted on in each on block, in the order
// the seed draws; each block's first intervals are left out; the estimate
// pairs each on block with its off block; what it refuses.
#include <set>

#include "agent/experiment/runner.h"
#include "common/log.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "policy/experiment_switchback.h"
#include "tests/experiment/runner_harness.h"

namespace locus::testing {
namespace {

using google::protobuf::util::TimeUtil;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// Blocks of `block_s`, intervals of 5 s, seed 42.
v1::StartExperimentRequest Switchback(int64_t duration_s, int64_t block_s) {
  v1::StartExperimentRequest request = Request(duration_s, 5);
  request.set_design("switchback");
  *request.mutable_block() = TimeUtil::SecondsToDuration(block_s);
  return request;
}

struct Ticks {
  std::vector<bool> off;      // per tick
  std::vector<bool> restore;  // per tick
};

// Ticks until the experiment ends; the workers send `on_rate` bytes per
// CPU-second while Locus is on (the last tick's arms say), 1e6 while off.
// (What a common drift does to the pairs: policy/'s simulation.)
Ticks TickToTheEnd(Harness& h, double on_rate, int max_ticks = 400) {
  Ticks run;
  bool off = false;
  h.counter.rate = [&](int32_t) { return off ? 1e6 : on_rate; };
  for (int tick = 0; tick < max_ticks; ++tick) {
    const ArmsThisTick arms = h.Tick();
    EXPECT_THAT(arms.untreated, IsEmpty()) << "tick " << tick;
    off = arms.off;
    run.off.push_back(arms.off);
    run.restore.push_back(arms.restore);
    if (h.runner.Get()->state() != v1::EXPERIMENT_STATE_RUNNING) break;
  }
  return run;
}

TEST(SwitchbackTest, AlternatesTheHostByBlocksAndPairsOnWithOff) {
  Harness h;
  h.Tick();
  // 2 pairs of 20 s blocks: 4 intervals each, the first 2 left out.
  ASSERT_TRUE(
      h.runner.Start(Switchback(80, 20), v1::Policy::MODE_ENFORCE).ok());
  const Ticks run = TickToTheEnd(h, 1.2e6);
  const v1::ExperimentReport report = *h.runner.Get();
  ASSERT_EQ(report.state(), v1::EXPERIMENT_STATE_DONE) << report.reason();
  EXPECT_EQ(report.design(), "switchback");
  EXPECT_EQ(report.intervals(), 16u);

  // The blocks in the seed's order, each pair one on and one off.
  const std::vector<bool> order = experiment::SwitchbackSchedule(2, 42);
  ASSERT_THAT(report.blocks(), SizeIs(4));
  for (int b = 0; b < 4; ++b) {
    const v1::ExperimentBlock& block = report.blocks(b);
    EXPECT_EQ(block.on(), order[b]) << b;
    EXPECT_EQ(block.pair(), static_cast<uint32_t>(b / 2));
    EXPECT_TRUE(block.complete());
    EXPECT_EQ(block.intervals(), 2u) << "its burn-in left out";
    EXPECT_GT(block.bytes_per_cpu_second(), 0);
  }
  // Put back once at the start of each off block, held through it.
  int restores = 0, off_ticks = 0;
  for (size_t t = 0; t < run.off.size(); ++t) {
    restores += run.restore[t] ? 1 : 0;
    off_ticks += run.off[t] ? 1 : 0;
    if (run.restore[t]) {
      EXPECT_TRUE(run.off[t]);
    }
  }
  EXPECT_EQ(restores, 2);
  EXPECT_NEAR(off_ticks, 40, 2);

  // +20 % on over off.
  ASSERT_TRUE(report.work().valid()) << report.work().why_not();
  EXPECT_EQ(report.work().metric(), "host_bytes_per_cpu_second");
  // (The fake's reads carry ±2 % of noise.)
  EXPECT_NEAR(report.work().ratio(), 1.2, 0.04);
  EXPECT_LT(report.work().low(), 1.2);
  EXPECT_GT(report.work().high(), 1.2);
  EXPECT_EQ(report.work().df(), 1);
  EXPECT_THAT(report.verdict(), HasSubstr("Locus on: +2"));
  EXPECT_THAT(report.verdict(), HasSubstr("(2 pairs of blocks)"));
  EXPECT_EQ(h.counter.stops, 1);
  // Its workers are in no arm: no cells for a fleet to pool as A/B.
  EXPECT_THAT(report.cells(), IsEmpty());
}

TEST(SwitchbackTest, AStopMidBlockLeavesThatBlockOut) {
  Harness h;
  h.Tick();
  ASSERT_TRUE(
      h.runner.Start(Switchback(80, 20), v1::Policy::MODE_ENFORCE).ok());
  for (int i = 0; i < 52; ++i) h.Tick();  // two blocks and a half
  v1::ExperimentReport running = *h.runner.Get();
  EXPECT_THAT(running.verdict(), HasSubstr("no estimate yet"));
  ASSERT_THAT(running.blocks(), SizeIs(3));  // the third under way
  EXPECT_FALSE(running.blocks(2).complete());
  ASSERT_TRUE(h.runner.Stop({}).ok());
  h.Tick();
  const v1::ExperimentReport report = *h.runner.Get();
  EXPECT_EQ(report.state(), v1::EXPERIMENT_STATE_STOPPED);
  ASSERT_THAT(report.blocks(), SizeIs(3));
  EXPECT_FALSE(report.blocks(2).complete());
  EXPECT_FALSE(report.work().valid());
  EXPECT_THAT(report.work().why_not(), HasSubstr("has 1"));
  // After the run the loop is asked for nothing.
  const ArmsThisTick after = h.Tick();
  EXPECT_FALSE(after.off);
}

class OutcomeSink : public LogSink {
 public:
  void Write(const LogEntry& entry) override {
    for (const LogField& field : entry.fields) {
      if (field.name == "LOCUS_OUTCOME") outcomes.push_back(field.value);
    }
  }
  std::vector<std::string> outcomes;
};

// Stopped after two of three pairs: an estimate, and an interval that holds
// at the planned end only: journald's verdict word says inconclusive.
TEST(SwitchbackTest, AStopBeforeTheLastBlockIsInconclusive) {
  OutcomeSink sink;
  SetLogSink(&sink);
  Harness h;
  h.Tick();
  ASSERT_TRUE(
      h.runner.Start(Switchback(120, 20), v1::Policy::MODE_ENFORCE).ok());
  bool off = false;
  h.counter.rate = [&](int32_t) { return off ? 1e6 : 1.3e6; };
  for (int i = 0; i < 85; ++i) off = h.Tick().off;  // four blocks and a bit
  ASSERT_TRUE(h.runner.Stop({}).ok());
  h.Tick();
  SetLogSink(nullptr);
  const v1::ExperimentReport report = *h.runner.Get();
  ASSERT_TRUE(report.work().valid()) << report.work().why_not();
  EXPECT_THAT(report.verdict(), HasSubstr("inconclusive"));
  EXPECT_THAT(sink.outcomes, ::testing::Contains("inconclusive"));
  EXPECT_THAT(sink.outcomes,
              ::testing::Not(::testing::Contains("significant")));
}

TEST(SwitchbackTest, RefusesWhatItCannotRun) {
  Harness h;
  h.Tick();
  auto refused = [&](v1::StartExperimentRequest request) {
    absl::StatusOr<v1::ExperimentReport> r =
        h.runner.Start(request, v1::Policy::MODE_ENFORCE);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(r.status().message());
  };
  v1::StartExperimentRequest request = Switchback(80, 20);
  request.set_design("zigzag\n");
  EXPECT_THAT(refused(request), HasSubstr("no design 'zigzag\\n'"));
  request = Switchback(80, 20);
  request.set_aa(true);
  EXPECT_THAT(refused(request), HasSubstr("no A/A"));
  request = Switchback(80, 20);
  *request.mutable_pre() = TimeUtil::SecondsToDuration(60);
  EXPECT_THAT(refused(request), HasSubstr("no pre-period"));
  request = Request(80, 5);
  *request.mutable_block() = TimeUtil::SecondsToDuration(20);
  EXPECT_THAT(refused(request), HasSubstr("switchback's"));
  // 15 s: three intervals, one after a burn-in of two.
  EXPECT_THAT(refused(Switchback(120, 15)),
              HasSubstr("fewer than two intervals"));
  EXPECT_THAT(refused(Switchback(70, 20)), HasSubstr("two pairs of blocks"));
  request = Switchback(80, 20);
  request.add_levers("irqs");
  EXPECT_TRUE(h.runner.Start(request, v1::Policy::MODE_ENFORCE).ok())
      << "IRQ moves alone are a switchback's to test";
}

}  // namespace
}  // namespace locus::testing
