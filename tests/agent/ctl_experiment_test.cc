// locusctl experiment without a daemon: its options parsed strictly, its
// help, the report as text (verdict first, hostile strings escaped) and as
// JSON, and the line watch and top show while one runs.
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/ctl/commands.h"
#include "agent/ctl/ctl_args.h"
#include "agent/ctl/experiment_format.h"
#include "agent/ctl/format.h"
#include "agent/ctl/top_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/agent_test_util.h"

namespace locus {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

struct CtlRun {
  int code;
  std::string out;
  std::string err;
};

CtlRun Locusctl(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  int code = RunLocusctl(args, out, err);
  return {code, out.str(), err.str()};
}

// The sample, as it reads 30 intervals into its run.
v1::ExperimentReport RunningReport() {
  v1::ExperimentReport r = SampleExperimentReport();
  r.set_state(v1::EXPERIMENT_STATE_RUNNING);
  r.clear_ended();
  r.set_intervals(30);
  r.mutable_remaining()->set_seconds(1500);
  r.set_verdict("no significant difference (could detect ±4.0 %)");
  r.mutable_work()->set_significant(false);
  r.mutable_work()->set_low(0.99);
  return r;
}

TEST(ExperimentArgs, StartTakesEveryOptionBeforeOrAfterTheCommand) {
  auto inv =
      ParseCtlArgs({"--duration=1h30m", "experiment", "start", "--interval",
                    "15s", "--aa", "--seed=9", "--reason=canary on web-3",
                    "--burn-in=3", "--pre=10m", "--min-effect=3%",
                    "--latency-margin=15%", "--levers=connections,threads"});
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->command, "experiment");
  EXPECT_EQ(inv->args, std::vector<std::string>{"start"});
  EXPECT_EQ(inv->experiment.duration, absl::Minutes(90));
  EXPECT_EQ(inv->experiment.interval, absl::Seconds(15));
  EXPECT_TRUE(inv->experiment.aa);
  EXPECT_EQ(inv->experiment.seed, 9u);
  EXPECT_EQ(inv->experiment.reason, "canary on web-3");
  EXPECT_EQ(inv->experiment.burn_in, 3);
  EXPECT_EQ(inv->experiment.pre, absl::Minutes(10));
  EXPECT_EQ(inv->experiment.levers,
            (std::vector<std::string>{"connections", "threads"}));
  EXPECT_DOUBLE_EQ(inv->experiment.min_effect, 0.03);
  EXPECT_DOUBLE_EQ(inv->experiment.latency_margin.value(), 0.15);

  inv = ParseCtlArgs({"experiment", "start"});
  ASSERT_TRUE(inv.ok()) << inv.status();
  // Unset: the agent's defaults, not a copy of them here.
  EXPECT_EQ(inv->experiment.duration, absl::ZeroDuration());
  EXPECT_EQ(inv->experiment.interval, absl::ZeroDuration());
  EXPECT_FALSE(inv->experiment.aa);
  EXPECT_FALSE(inv->experiment.latency_margin.has_value());

  for (const char* sub : {"status", "stop"}) {
    inv = ParseCtlArgs({"experiment", sub, "--json"});
    ASSERT_TRUE(inv.ok()) << sub << ": " << inv.status();
    EXPECT_TRUE(inv->json);
  }
  inv = ParseCtlArgs({"experiment", "stop", "--reason", "p99 alarm"});
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->experiment.reason, "p99 alarm");
}

// A bad duration is a usage error naming the option and the value, whatever
// absl would have guessed: a bare number has no unit.
TEST(ExperimentArgs, DurationsAreStrict) {
  for (const char* flag : {"--duration", "--interval"}) {
    for (const char* bad :
         {"30", "x", "-5m", "0s", "0", "inf", "", "10 s", "1fortnight",
          // Longer than 30 days: the agent would refuse it too.
          "18446744174s", "4294967296s", "721h"}) {
      std::string arg = absl::StrCat(flag, "=", bad);
      auto inv = ParseCtlArgs({"experiment", "start", arg});
      ASSERT_FALSE(inv.ok()) << arg;
      EXPECT_EQ(inv.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(std::string(inv.status().message()),
                  HasSubstr(absl::StrCat(flag, " wants a duration")))
          << arg;
      EXPECT_THAT(std::string(inv.status().message()),
                  HasSubstr(absl::StrCat("not '", bad, "'")))
          << arg;
      CtlRun r = Locusctl({"experiment", "start", arg});
      EXPECT_EQ(r.code, kExitUsage) << arg;
      EXPECT_THAT(r.err, StartsWith(absl::StrCat("locusctl: ", flag)));
      EXPECT_EQ(r.out, "");
    }
  }
  auto inv = ParseCtlArgs({"experiment", "start", "--duration=2h45m30s"});
  ASSERT_TRUE(inv.ok());
  EXPECT_EQ(inv->experiment.duration,
            absl::Hours(2) + absl::Minutes(45) + absl::Seconds(30));
}

TEST(ExperimentArgs, RefusesWhatDoesNotFit) {
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {{"experiment"}, "experiment wants start, status, stop or pool"},
           {{"experiment", "pool"}, "usage: locusctl experiment pool FILE"},
           {{"experiment", "pool", "a.json", "--aa"},
            "--aa does not apply to experiment pool"},
           {{"experiment", "begin"}, "not 'begin'"},
           {{"experiment", "start", "now"}, "usage: locusctl experiment"},
           {{"experiment", "stop", "--duration=5m"},
            "--duration does not apply to experiment stop"},
           {{"experiment", "status", "--aa"},
            "--aa does not apply to experiment status"},
           {{"experiment", "status", "--reason=x"},
            "--reason does not apply to experiment status"},
           {{"status", "--seed=3"}, "--seed does not apply to status"},
           {{"experiment", "start", "--count=2"}, "--count does not apply"},
           {{"experiment", "start", "--seed=-1"}, "--seed wants a number"},
           {{"experiment", "start", "--seed=x"}, "not 'x'"},
           {{"experiment", "start", "--min-effect=0%"},
            "--min-effect wants a percentage"},
           {{"experiment", "start", "--latency-margin=-5%"},
            "--latency-margin wants a percentage from 0 to 1000"},
           {{"experiment", "start", "--levers=threads,cpu"},
            "--levers: no lever 'cpu' (threads, pages, irqs, connections)"},
           {{"experiment", "start", "--levers=irqs"},
            "--levers: irqs alone treats nothing"},
           {{"experiment", "start", "--design=abba"},
            "--design wants ab or switchback, not 'abba'"},
           {{"experiment", "start", "--block=5m"},
            "--block is a switchback's: add --design=switchback"},
           {{"experiment", "start", "--design=switchback", "--block=0s"},
            "--block wants a duration greater than 0"},
           {{"experiment", "start", "--burn-in=-1"},
            "--burn-in wants a number of intervals"},
           {{"experiment", "status", "--burn-in=2"},
            "--burn-in does not apply to experiment status"},
           {{"experiment", "start", "--duration"}, "--duration needs a value"},
           {{"experiment", "start", "--duration=15s", "--interval=10s"},
            "--duration=15s is shorter than two intervals of "
            "--interval=10s"}}) {
    auto inv = ParseCtlArgs(c.args);
    ASSERT_FALSE(inv.ok()) << c.says;
    EXPECT_EQ(inv.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(inv.status().message()), HasSubstr(c.says));
    EXPECT_EQ(Locusctl(c.args).code, kExitUsage) << c.says;
  }
  // A switchback takes its block, and IRQ moves alone.
  auto switchback = ParseCtlArgs({"experiment", "start", "--design=switchback",
                                  "--block=2m", "--levers=irqs"});
  ASSERT_TRUE(switchback.ok()) << switchback.status();
  EXPECT_EQ(switchback->experiment.design, "switchback");
  EXPECT_EQ(switchback->experiment.block, absl::Minutes(2));
  EXPECT_EQ(switchback->experiment.levers, std::vector<std::string>{"irqs"});
  // Two intervals exactly is enough.
  EXPECT_TRUE(
      ParseCtlArgs({"experiment", "start", "--duration=20s", "--interval=10s"})
          .ok());
}

TEST(ExperimentArgs, EachSubcommandHasItsHelp) {
  struct Case {
    std::vector<std::string> args;
    const char* synopsis;
  };
  for (const Case& c : std::vector<Case>{
           {{"experiment", "start", "--help"},
            "experiment start [--duration=D] [--interval=D] [--pre=D] "
            "[--min-effect=P%] [--latency-margin=P%] [--levers=L,...] "
            "[--design=ab|switchback] [--block=D] [--aa] [--seed=N] "
            "[--burn-in=N] [--reason=TEXT] [--json]"},
           {{"help", "experiment", "status"}, "experiment status [--json]"},
           {{"experiment", "stop", "-h"},
            "experiment stop [--reason=TEXT] [--json]"},
           {{"experiment", "--help"}, "experiment start|status|stop"}}) {
    CtlRun r = Locusctl(c.args);
    EXPECT_EQ(r.code, kExitOk) << c.synopsis << r.err;
    EXPECT_THAT(r.out, StartsWith(absl::StrCat(
                           "usage: locusctl [--socket=PATH] ", c.synopsis)));
    EXPECT_THAT(r.out, HasSubstr("Global options:"));
  }
  EXPECT_THAT(Locusctl({"experiment", "start", "--help"}).out,
              HasSubstr("--aa           A/A"));
  EXPECT_THAT(CtlUsage(""), HasSubstr("experiment start|status|stop"));
}

TEST(FormatExperiment, VerdictFirstThenEstimatesArmsAndWorkers) {
  std::string text = ctl::FormatExperiment(SampleExperimentReport());
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  ASSERT_GT(lines.size(), 10u);
  EXPECT_EQ(lines[0],
            "VERDICT: Locus: +3.1 % work per CPU-second [1.2, 5.0], "
            "significant");
  EXPECT_THAT(text, HasSubstr("experiment exp-20261202-173012: done, A/B\n"));
  EXPECT_THAT(text, HasSubstr(" after 30m of 30m; interval 10s, seed 42\n"));
  EXPECT_THAT(text, HasSubstr("  180 of 180 intervals; workers 2 treated, 2 "
                              "control\n"));
  EXPECT_THAT(text, HasSubstr("  work per CPU-second         +3.1 % [+1.2, "
                              "+5.0], significant (could detect ±4.0 %)\n"));
  EXPECT_THAT(text, HasSubstr("  connections per CPU-second  -0.5 % [-3.0, "
                              "+2.1], not significant (could detect ±5.0 "
                              "%)\n"));
  EXPECT_THAT(text, HasSubstr("  connections fair: largest skew 8 % from a "
                              "worker's fair share (bound ±10 %)\n"));
  EXPECT_THAT(text, HasSubstr("  guardrail: p of harm 0.41, bound 0.0001"));
  EXPECT_THAT(text, HasSubstr("  work source: bpf: socket sends and accepts "
                              "per process\n"));
  EXPECT_THAT(text, HasSubstr("\n  PMU: none (perf_event_paranoid 3)\n"));
  EXPECT_THAT(text, HasSubstr("  method: cluster bootstrap"));
  EXPECT_THAT(text, HasSubstr("notes:\n  - worker 1203 exited at interval 90"));
  EXPECT_THAT(text, HasSubstr("PID     ARM      NODE  ACTIVE    INTERVALS  "
                              "BYTES/CPU-S CONN-SHARE  COMM\n"));
  // Treated first; a lost worker says when it was lost.
  EXPECT_THAT(text, HasSubstr("  1201    treated     0  yes             180 "
                              "     2.3 GiB      26.0%  nginx\n"));
  EXPECT_THAT(text, HasSubstr("  1203    treated     1  lost@90          90"));
  EXPECT_LT(text.find("  1203 "), text.find("  1202 "));
}

// A worker may call itself anything: its comm cannot clear the screen or
// start a line of its own.
// An emulated CPU's clock is said before the figures it qualifies; on
// hardware nothing is said.
TEST(FormatExperiment, AnEmulatedClockIsSaidBeforeTheFigures) {
  v1::ExperimentReport r = SampleExperimentReport();
  EXPECT_THAT(ctl::FormatExperiment(r), Not(HasSubstr("TIMING")));
  r.set_clock("emulated CPU (QEMU's TCG): compares within this run only");
  const std::string text = ctl::FormatExperiment(r);
  const size_t timing = text.find("  TIMING: emulated CPU");
  ASSERT_NE(timing, std::string::npos) << text;
  EXPECT_LT(timing, text.find("\n  work per CPU-second ")) << text;
}

TEST(FormatExperiment, WhatUsersFeelComesWithTheEstimates) {
  v1::ExperimentReport r = SampleExperimentReport();
  // A report from an agent that measured none of it says nothing of it.
  EXPECT_THAT(ctl::FormatExperiment(r), Not(HasSubstr("service time")));
  v1::ExperimentArmFigures* t = r.mutable_treated_figures();
  t->set_requests(12000);
  t->set_p50_us(850);
  t->set_p99_us(12300);
  t->set_wait_per_cpu_second(0.120);
  t->set_wait_us_per_request(41);
  t->set_voluntary_switches_per_request(1.25);
  t->set_involuntary_switches_per_request(0.5);
  t->set_bytes_per_request(4096);
  r.mutable_control_figures()->set_connections(300);
  r.mutable_control_figures()->set_bytes_per_connection(20000);
  r.mutable_control_figures()->set_wait_per_cpu_second(0.05);
  v1::ExperimentEstimate* p99 = r.mutable_service_p99();
  p99->set_valid(true);
  p99->set_ratio(1.31);
  p99->set_low(1.12);
  p99->set_high(1.5);
  r.mutable_service_p50()->set_why_not("needs two workers with requests");
  r.set_host_bytes_per_second(125e6);
  r.set_host_cpu_busy(0.73);
  r.set_traffic_differs(true);
  r.set_latency_margin(0.1);
  r.set_latency_guardrail_p(0.003);
  r.set_service_source("bpf: per connection");
  const std::string text = ctl::FormatExperiment(r);
  EXPECT_THAT(text, HasSubstr("    p50 n/a (needs two workers with requests)"
                              "   p99 +31.0 % [+12.0, +50.0]\n"));
  EXPECT_THAT(text, HasSubstr("    treated: p50 850 us, p99 12.3 ms over "
                              "12000 requests\n"));
  EXPECT_THAT(text, HasSubstr("    control: no requests seen\n"));
  EXPECT_THAT(text, HasSubstr("    treated: run-queue wait 0.120 s per "
                              "CPU-second; per request 41 us waiting, 1.25 "
                              "voluntary + 0.50 involuntary switches, 4096 "
                              "bytes\n"));
  EXPECT_THAT(text, HasSubstr("    control: run-queue wait 0.050 s per "
                              "CPU-second; 20000 bytes per connection\n"));
  EXPECT_THAT(text, HasSubstr("  host: the workers sent 125.0 MB per second; "
                              "CPUs 73 % busy (softirq included)\n"));
  EXPECT_THAT(text, HasSubstr("  TRAFFIC DIFFERS: "));
  EXPECT_THAT(text, HasSubstr("significantly over 110 % of control; last "
                              "look p 0.003\n"));
  // After the estimates it sits beside, before the workers' table.
  EXPECT_LT(text.find("\n  work per CPU-second "),
            text.find("  service time, treated/control:"));
  EXPECT_LT(text.find("  service time, treated/control:"),
            text.find("workers:\n"));

  r.set_state(v1::EXPERIMENT_STATE_GUARDRAIL);
  r.set_guardrail("latency");
  EXPECT_THAT(ctl::FormatExperiment(r),
              HasSubstr("GUARDRAIL: treated requests waited significantly "
                        "longer here (p 0.003)"));
}

TEST(FormatExperiment, ASwitchbackShowsOnOverOffAndItsBlocks) {
  v1::ExperimentReport r = SampleExperimentReport();
  r.set_design("switchback");
  r.mutable_block()->set_seconds(300);
  r.mutable_duration()->set_seconds(1200);
  r.mutable_work()->set_metric("host_bytes_per_cpu_second");
  for (int b = 0; b < 4; ++b) {
    v1::ExperimentBlock* block = r.add_blocks();
    block->set_index(b);
    block->set_pair(b / 2);
    block->set_on(b == 1 || b == 2);
    block->set_complete(b < 3);
    block->set_intervals(b < 3 ? 28 : 0);
    block->set_bytes(b < 3 ? 1e9 : 0);
    block->set_bytes_per_cpu_second(b < 3 ? 2.5 * 1048576 : 0);
    block->set_p99_us(b < 3 ? 3100 : 0);
  }
  const std::string text = ctl::FormatExperiment(r);
  EXPECT_THAT(text, HasSubstr("switchback (the whole host, Locus on and off "
                              "by block)"));
  EXPECT_THAT(text, HasSubstr("blocks of 5m, 2 pairs"));
  EXPECT_THAT(text, HasSubstr("host bytes per CPU-second   +3.1 %"));
  EXPECT_THAT(text, HasSubstr("    1    0 on         28      2.5 MiB    "
                              "3.10 ms"));
  EXPECT_THAT(text, HasSubstr("(under way)"));
  EXPECT_THAT(text, Not(HasSubstr("treated")));  // no arms of workers
  EXPECT_THAT(ctl::ExperimentLine(r),
              HasSubstr("switchback, 180 of 120 intervals; host bytes per "
                        "CPU-second (on / off) +3.1 %"));
}

TEST(FormatExperiment, HostileStringsAreShownEscaped) {
  v1::ExperimentReport r = SampleExperimentReport();
  r.set_verdict("ok\x1b]0;owned\x07");
  r.add_notes("a\nVERDICT: forged");
  std::string text = ctl::FormatExperiment(r);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(text.find('\x07'), std::string::npos);
  EXPECT_THAT(text, HasSubstr("nginx\n  1202 "));  // its row starts a line
  EXPECT_THAT(text, HasSubstr("  ngx\\x1b[2J\\nroot#\n"));
  EXPECT_THAT(text, HasSubstr("VERDICT: ok\\x1b]0;owned\\x07\n"));
  EXPECT_THAT(text, HasSubstr("  - a\\nVERDICT: forged\n"));
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    EXPECT_FALSE(absl::StartsWith(line, "root#")) << text;
    EXPECT_FALSE(absl::StartsWith(line, "VERDICT: forged")) << text;
  }
}

TEST(FormatExperiment, RunningGuardrailAndAaReadAsSuch) {
  std::string text = ctl::FormatExperiment(RunningReport());
  EXPECT_THAT(text, StartsWith("VERDICT (so far): no significant difference "
                               "(could detect ±4.0 %)\n"));
  EXPECT_THAT(text, HasSubstr(", 5m elapsed, 25m left of 30m;"));
  EXPECT_THAT(text, HasSubstr("30 of 180 intervals"));
  EXPECT_THAT(text, HasSubstr("+3.1 % [-1.0, +5.0], not significant"));

  v1::ExperimentReport fresh = RunningReport();
  fresh.set_verdict("");
  fresh.set_intervals(0);
  fresh.mutable_work()->set_valid(false);
  fresh.mutable_work()->set_why_not("fewer than 2 intervals");
  text = ctl::FormatExperiment(fresh);
  EXPECT_THAT(text, StartsWith("VERDICT: none yet (0 of 180 intervals)\n"));
  EXPECT_THAT(text, HasSubstr("work per CPU-second         n/a (fewer than 2 "
                              "intervals)\n"));

  v1::ExperimentReport harmful = SampleExperimentReport();
  harmful.set_state(v1::EXPERIMENT_STATE_GUARDRAIL);
  harmful.set_guardrail_p(0.0004);
  harmful.set_guardrail_bound(0.001);
  harmful.set_aa(true);
  harmful.set_connections_fair(false);
  harmful.set_connection_skew(0.23);
  text = ctl::FormatExperiment(harmful);
  EXPECT_THAT(text, HasSubstr("\nGUARDRAIL: Locus was significantly harmful "
                              "here (p 0.0004 below its bound 0.001)"));
  EXPECT_THAT(text, HasSubstr(": stopped by the guardrail, A/A (neither arm "
                              "treated"));
  EXPECT_THAT(text, HasSubstr("connections SKEWED: largest skew 23 %"));
}

// With a plan, before its end: every interval shown is valid at any look,
// and reads "conclusive" or "not conclusive"; the equal-weight estimate and
// the burn-in have lines of their own.
TEST(FormatExperiment, BeforeThePlannedEndItReadsConclusiveOrNot) {
  v1::ExperimentReport r = RunningReport();
  r.set_planned(180);
  r.set_burn_in(2);
  r.set_burned_intervals(16);
  r.set_guardrail_z(2.41);
  r.mutable_pre()->set_seconds(600);
  r.set_pre_intervals(60);
  r.set_min_effect(0.03);
  r.set_planned_detectable(0.027);
  r.set_treated_confined_ticks(300);
  r.set_treated_widened_ticks(100);
  r.mutable_work()->set_adjusted(true);
  r.mutable_work()->set_variance_reduction(0.83);
  *r.mutable_work_per_worker() = r.work();
  r.mutable_work_per_worker()->set_ratio(0.99);
  std::string text = ctl::FormatExperiment(r);
  EXPECT_THAT(text, HasSubstr("+3.1 % [-1.0, +5.0], not conclusive (an "
                              "interval valid at any look)"));
  EXPECT_THAT(text, HasSubstr("    per worker, equal weight  -1.0 % "));
  EXPECT_THAT(text, HasSubstr("  burn-in: each worker's first 2 intervals "
                              "after its arm was set are left out (16 "
                              "worker-intervals so far)\n"));
  EXPECT_THAT(text, HasSubstr("  soft home: treated workers widened beyond "
                              "their home node 25.0 % of their ticks (100 "
                              "of 400)\n"));
  EXPECT_THAT(text, HasSubstr("(z 2.41, O'Brien-Fleming, exact"));
  EXPECT_THAT(text, HasSubstr("  pre-period: 10m (60 intervals read, nothing "
                              "applied)"));
  EXPECT_THAT(text, HasSubstr("; CUPED removed 83 % of its variance"));
  EXPECT_THAT(text, HasSubstr("  planned: to detect ±3.0 % (expected ±2.7 % "
                              "at this duration)\n"));
  v1::Metrics m = SyntheticMetrics(7, 2);
  *m.mutable_experiment() = r;
  EXPECT_THAT(ctl::FormatMetrics(m), HasSubstr("+3.1 % [-1.0, +5.0], not "
                                               "conclusive"));
  r.set_state(v1::EXPERIMENT_STATE_DONE);
  r.set_intervals(180);
  EXPECT_THAT(ctl::FormatExperiment(r), HasSubstr("+5.0], not significant"));
}

// Three hosts' reports (log ratios 0.02, 0.05, -0.01, SEs 0.01, 0.02,
// 0.015: policy's pool test computes them by hand) pool from files, without
// an agent; a report without a standard error is refused by name.
TEST(ExperimentPool, ThreeHostsReportsPoolFromFiles) {
  const std::string dir = ::testing::TempDir();
  std::vector<std::string> args = {"--socket=/nonexistent", "experiment",
                                   "pool"};
  const double logs[] = {0.02, 0.05, -0.01}, ses[] = {0.01, 0.02, 0.015};
  for (int i = 0; i < 3; ++i) {
    v1::ExperimentReport r = SampleExperimentReport();
    r.set_host(absl::StrCat("web-", i));
    r.mutable_work()->set_log_ratio(logs[i]);
    r.mutable_work()->set_se(ses[i]);
    std::string json;
    ASSERT_TRUE(google::protobuf::util::MessageToJsonString(r, &json).ok());
    args.push_back(absl::StrCat(dir, "/pool", i, ".json"));
    std::ofstream(args.back()) << json;
  }
  CtlRun run = Locusctl(args);
  ASSERT_EQ(run.code, kExitOk) << run.err;
  EXPECT_THAT(run.out, HasSubstr("pooled over 3 hosts"));
  EXPECT_THAT(run.out, HasSubstr("fixed effect (one effect everywhere)   "
                                 "+1.7 % [+0.2, +3.2]"));
  EXPECT_THAT(run.out, HasSubstr("random effects (DerSimonian-Laird)     "
                                 "+1.8 % [-1.1, +4.8]"));
  EXPECT_THAT(run.out, HasSubstr("I² 67 % (Q 6.05 on 2 df), tau 2.1 %"));
  EXPECT_THAT(run.out, HasSubstr("  web-1 "));

  v1::ExperimentReport old = SampleExperimentReport();
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(old, &json).ok());
  std::ofstream(dir + "/old.json") << json;
  run = Locusctl({"experiment", "pool", args[3], dir + "/old.json"});
  EXPECT_EQ(run.code, kExitFailed);
  EXPECT_THAT(run.err, HasSubstr("old.json: no estimate with a standard "
                                 "error"));

  // A switchback estimates the whole host on against off: not pooled with
  // A/B experiments.
  v1::ExperimentReport switchback = SampleExperimentReport();
  switchback.set_design("switchback");
  switchback.mutable_work()->set_se(0.01);
  std::string switchback_json;
  ASSERT_TRUE(
      google::protobuf::util::MessageToJsonString(switchback, &switchback_json)
          .ok());
  std::ofstream(dir + "/switchback.json") << switchback_json;
  run = Locusctl({"experiment", "pool", args[3], dir + "/switchback.json"});
  EXPECT_EQ(run.code, kExitFailed);
  EXPECT_THAT(run.err, HasSubstr("switchback.json: a switchback experiment "
                                 "among A/B ones"));
  EXPECT_EQ(Locusctl({"experiment", "pool", dir + "/none.json"}).code,
            kExitFailed);

  // An A/A run and a stopped one are no treatment effects: left out, named.
  v1::ExperimentReport aa = SampleExperimentReport();
  aa.set_aa(true);
  v1::ExperimentReport stopped = SampleExperimentReport();
  stopped.set_state(v1::EXPERIMENT_STATE_STOPPED);
  for (auto [file, r] :
       {std::pair{"/aa.json", &aa}, {"/stopped.json", &stopped}}) {
    r->mutable_work()->set_se(0.01);
    std::string text;
    ASSERT_TRUE(google::protobuf::util::MessageToJsonString(*r, &text).ok());
    std::ofstream(dir + file) << text;
    args.push_back(dir + file);
  }
  run = Locusctl(args);
  ASSERT_EQ(run.code, kExitOk) << run.err;
  EXPECT_THAT(run.out, HasSubstr("pooled over 3 hosts"));
  EXPECT_THAT(run.out, HasSubstr("aa.json: an A/A run (nothing was treated)"));
  EXPECT_THAT(run.out,
              HasSubstr("stopped.json: it did not run its whole duration"));
  // A FIFO is refused at once, never waited on.
  const std::string fifo = dir + "/pool.fifo";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  run = Locusctl({"experiment", "pool", fifo, args[3]});
  EXPECT_EQ(run.code, kExitFailed);
  EXPECT_THAT(run.err, HasSubstr("not a regular file"));
}

TEST(FormatExperiment, JsonIsTheWholeReportOnOneLine) {
  v1::ExperimentReport r = SampleExperimentReport();
  auto json = ctl::TextOrJson(r, true, ctl::FormatExperiment);
  ASSERT_TRUE(json.ok()) << json.status();
  ASSERT_EQ(json->back(), '\n');
  EXPECT_EQ(json->find('\n'), json->size() - 1);
  EXPECT_EQ(json->find('\x1b'), std::string::npos);
  EXPECT_THAT(*json, HasSubstr("\"comm\":\"ngx\\u001b[2J\\nroot#\""));
  EXPECT_THAT(*json, HasSubstr("\"state\":\"EXPERIMENT_STATE_DONE\""));
  v1::ExperimentReport back;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*json, &back).ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(r, back));
}

TEST(WatchLine, OneLinePerTickWithStateIntervalsAndEstimate) {
  v1::Metrics m = SyntheticMetrics(7, 2);
  m.clear_time();
  *m.mutable_experiment() = RunningReport();
  std::vector<std::string> lines = absl::StrSplit(ctl::FormatMetrics(m), '\n');
  ASSERT_GE(lines.size(), 2u);
  EXPECT_THAT(lines[0], StartsWith("tick 7 "));
  EXPECT_EQ(lines[1],
            "  experiment exp-20261202-173012 running A/B, 30 of 180 "
            "intervals, 25m left; work per CPU-second +3.1 % [-1.0, +5.0], "
            "not significant");
  // With service times: their p99 beside the work.
  v1::ExperimentEstimate* p99 = m.mutable_experiment()->mutable_service_p99();
  p99->set_valid(true);
  p99->set_ratio(1.2);
  p99->set_low(1.1);
  p99->set_high(1.3);
  lines = absl::StrSplit(ctl::FormatMetrics(m), '\n');
  EXPECT_THAT(lines[1],
              ::testing::EndsWith("not significant; p99 service time +20.0 % "
                                  "[+10.0, +30.0]"));

  m.mutable_experiment()->set_state(v1::EXPERIMENT_STATE_STOPPED);
  m.mutable_experiment()->set_id("exp\n1");
  lines = absl::StrSplit(ctl::FormatMetrics(m), '\n');
  EXPECT_THAT(lines[1], StartsWith("  experiment exp\\n1 stopped A/B, 30 of "
                                   "180 intervals; work per CPU-second"));
  EXPECT_THAT(lines[1], HasSubstr("; no significant difference"));

  std::vector<std::string> top = ctl::RenderTop(m, 40, 0);
  EXPECT_THAT(top, ::testing::Contains(StartsWith("experiment exp\\n1 ")));
  m.clear_experiment();
  EXPECT_THAT(ctl::FormatMetrics(m), Not(HasSubstr("experiment")));
}

}  // namespace
}  // namespace locus
