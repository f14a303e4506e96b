// Runs the real locusctl binary against a test server (fake controller, fake
// publisher) on a temporary socket.
#include <fcntl.h>
#include <google/protobuf/util/json_util.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/api/agent_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/agent_test_util.h"
#include "tests/common/test_paths.h"

namespace locus {
namespace {

using ::testing::HasSubstr;

// The fake, plus what locusd answers for a look-alike its scan refused.
class RefusingController : public FakeController {
 public:
  absl::StatusOr<v1::ExplainResponse> Explain(
      const v1::ExplainRequest& request) override {
    if (request.subject_case() == v1::ExplainRequest::kTid &&
        request.tid() == 4242) {
      return absl::NotFoundError(
          "pid 4242 (nginx): not trusted as a target: its executable "
          "/tmp/x/nginx is owned by uid 65534, not root");
    }
    if (request.subject_case() == v1::ExplainRequest::kTid &&
        request.tid() == 4343) {  // an agent that did not escape its path
      return absl::NotFoundError(
          "pid 4343 (nginx): not trusted as a target: its executable "
          "/tmp/a\n\x1b[2J\neverything restored; bye/nginx is owned by "
          "uid 1000, not root");
    }
    return FakeController::Explain(request);
  }
};

class LocusctlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AgentServerOptions o;
    o.socket_path = dir_.File("locusd.sock");
    o.socket_group = "root";
    auto server = AgentServer::Start(o, &hub_, &controller_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    publisher_ =
        std::make_unique<FakePublisher>(&hub_, absl::Milliseconds(20), 6);
  }
  void TearDown() override {
    if (publisher_) publisher_->Stop();
    if (server_) server_->Shutdown();
  }
  ProcessResult Ctl(std::vector<std::string> args) {
    args.insert(args.begin(), "--socket=" + server_->socket_path());
    args.insert(args.begin(), LOCUSCTL_PATH);
    return RunProcess(args);
  }

  TempDir dir_;
  MetricsHub hub_;
  RefusingController controller_;
  std::unique_ptr<AgentServer> server_;
  std::unique_ptr<FakePublisher> publisher_;
};

TEST_F(LocusctlTest, StatusAnswers) {
  ProcessResult r = Ctl({"status"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("locusd 0.1.0-test mode dry_run"));
  EXPECT_THAT(r.out, HasSubstr("policy /etc/locus/policy.yaml version 3"));
  EXPECT_THAT(r.out, HasSubstr("numa_faults"));
  EXPECT_THAT(r.out, HasSubstr("fentry: EPERM"));
}

TEST_F(LocusctlTest, StatusJsonParses) {
  ProcessResult r = Ctl({"status", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  v1::AgentStatus status;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &status).ok())
      << r.out;
  EXPECT_EQ(status.mode(), v1::AGENT_MODE_DRY_RUN);
  EXPECT_EQ(status.numa_nodes(), 2u);
}

TEST_F(LocusctlTest, WatchReceivesCountMessages) {
  ProcessResult r = Ctl({"watch", "--count=3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int ticks = 0;
  int actions = 0;
  for (const std::string& line : SplitLines(r.out)) {
    if (absl::StartsWith(line, "tick ")) ++ticks;
    if (absl::StartsWith(line, "  action pin tid 1201")) ++actions;
  }
  EXPECT_EQ(ticks, 3) << r.out;
  EXPECT_EQ(actions, 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr("node 1 busy 75% local 80%"));
}

TEST_F(LocusctlTest, WatchJsonLinesParse) {
  ProcessResult r = Ctl({"watch", "--count=3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = SplitLines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  uint64_t last_tick = 0;
  for (const std::string& line : lines) {
    v1::Metrics m;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(line, &m).ok())
        << line;
    EXPECT_GT(m.tick(), last_tick);
    last_tick = m.tick();
    EXPECT_EQ(m.tasks_size(), 6);
    EXPECT_EQ(m.nodes_size(), 2);
    EXPECT_EQ(m.actions(0).reason(), "82% remote faults on node 1");
  }
  EXPECT_THAT(lines[0], HasSubstr("\"subscriber_dropped_total\":"));
}

// Lines a child writes to the pipe `fd`, as they come.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  // Reads until `done` holds for the lines so far, EOF, or the deadline.
  template <typename Done>
  const std::vector<std::string>& Until(Done done, absl::Duration timeout) {
    absl::Time deadline = absl::Now() + timeout;
    while (!done(lines_) && absl::Now() < deadline) {
      pollfd p = {fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      char buf[65536];
      ssize_t n = read(fd_, buf, sizeof(buf));
      if (n <= 0) break;
      partial_.append(buf, static_cast<size_t>(n));
      for (size_t nl; (nl = partial_.find('\n')) != std::string::npos;) {
        lines_.push_back(partial_.substr(0, nl));
        partial_.erase(0, nl + 1);
      }
    }
    return lines_;
  }

 private:
  int fd_;
  std::string partial_;
  std::vector<std::string> lines_;
};

// A watch stopped (SIGSTOP) for 50 ticks and continued gets the current
// tick with the count it missed within a message or two, not the 50 old
// ticks with drops 0. The ticks are small on purpose: gRPC's 64 KiB window
// and the socket buffers hold all 50, so the agent must not send them.
TEST_F(LocusctlTest, AStoppedWatchGetsTheNewestTickWithTheCountMissed) {
  ASSERT_LT(SyntheticMetrics(1, 6).ByteSizeLong() * 60, 48u << 10)
      << "ticks this big would overflow the buffers by themselves";
  int out[2];
  ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
  std::string socket_arg = "--socket=" + server_->socket_path();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(out[1], 1);
    execl(LOCUSCTL_PATH, LOCUSCTL_PATH, socket_arg.c_str(), "watch", "--json",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  LineReader reader(out[0]);
  auto got = [](size_t n) {
    return [n](const std::vector<std::string>& l) { return l.size() >= n; };
  };
  ASSERT_EQ(reader.Until(got(3), absl::Seconds(10)).size(), 3u);
  ASSERT_EQ(kill(pid, SIGSTOP), 0);
  const uint64_t stopped_at = publisher_->ticks();
  while (publisher_->ticks() < stopped_at + 50) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  const uint64_t resumed_at = publisher_->ticks();
  ASSERT_EQ(kill(pid, SIGCONT), 0);
  std::vector<v1::Metrics> after;  // what came after the first three
  auto fresh = [&](const std::vector<std::string>& lines) {
    after.clear();
    for (size_t i = 3; i < lines.size(); ++i) {
      v1::Metrics m;
      if (!google::protobuf::util::JsonStringToMessage(lines[i], &m).ok()) {
        continue;
      }
      after.push_back(m);
    }
    return !after.empty() && after.back().tick() >= resumed_at;
  };
  const std::vector<std::string> lines = reader.Until(fresh, absl::Seconds(10));
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  close(out[0]);
  ASSERT_TRUE(fresh(lines)) << "no tick since the resume";
  // Stale: published while it was stopped, delivered after.
  int stale = 0;
  uint64_t missed = 0;
  for (const v1::Metrics& m : after) {
    if (m.tick() > stopped_at + 1 && m.tick() < resumed_at) ++stale;
    missed += m.drops().subscriber_dropped();
    if (m.tick() >= resumed_at) break;
  }
  EXPECT_LE(stale, 2) << "old ticks replayed after the resume";
  EXPECT_GE(missed, 45u) << "the ticks missed are not counted";
  v1::Metrics previous;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(lines[2], &previous).ok());
  for (const v1::Metrics& m : after) {
    EXPECT_EQ(m.tick() - previous.tick() - 1, m.drops().subscriber_dropped())
        << "tick " << m.tick() << " after " << previous.tick();
    previous = m;
  }
}

TEST_F(LocusctlTest, TopDrawsFramesAndStopsAtCount) {
  ProcessResult r = Ctl({"top", "--count=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int frames = 0;
  for (const std::string& line : SplitLines(r.out)) {
    if (absl::StartsWith(line, "locus  tick ")) ++frames;
  }
  EXPECT_EQ(frames, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("NODE"));
  EXPECT_THAT(r.out, HasSubstr("virtio1-input.0"));
  // Threads are listed worst first: tid 1205 has the most remote faults.
  size_t worst = r.out.find("1205    nginx");
  size_t best = r.out.find("1200    nginx");
  ASSERT_NE(worst, std::string::npos) << r.out;
  ASSERT_NE(best, std::string::npos) << r.out;
  EXPECT_LT(worst, best);
  // Not a terminal: no escape sequences.
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
}

// `top` on a real terminal (a pty): alternate screen while it runs, and
// the screen and cursor given back whichever way the user quits.
class LocusctlTopTerminalTest : public LocusctlTest,
                                public ::testing::WithParamInterface<char> {};

TEST_P(LocusctlTopTerminalTest, QuitsAndRestoresTheTerminal) {
  std::string socket_arg = "--socket=" + server_->socket_path();
  winsize size = {};
  size.ws_row = 30;
  size.ws_col = 100;
  int master = -1;
  pid_t pid = forkpty(&master, nullptr, nullptr, &size);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl(LOCUSCTL_PATH, LOCUSCTL_PATH, socket_arg.c_str(), "top",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string screen;
  // Reads until `done` says so, EOF, or the deadline.
  auto read_until = [&](auto done, absl::Duration timeout) {
    absl::Time deadline = absl::Now() + timeout;
    while (!done() && absl::Now() < deadline) {
      pollfd p = {master, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      ssize_t n = read(master, buf, sizeof(buf));
      if (n <= 0) return;  // EIO: the child is gone
      screen.append(buf, static_cast<size_t>(n));
    }
  };
  read_until(
      [&] {
        return screen.find("virtio1-input.0") != std::string::npos &&
               screen.find("locus  tick") != std::string::npos;
      },
      absl::Seconds(10));
  EXPECT_THAT(screen, HasSubstr("\x1b[?1049h"));  // alternate screen
  char key = GetParam();
  ASSERT_EQ(write(master, &key, 1), 1);
  read_until([] { return false; }, absl::Seconds(10));
  int status = 0;
  pid_t waited = 0;
  for (int i = 0; i < 100 && waited == 0; ++i) {
    waited = waitpid(pid, &status, WNOHANG);
    if (waited == 0) absl::SleepFor(absl::Milliseconds(50));
  }
  if (waited == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    FAIL() << "locusctl top did not quit on key " << static_cast<int>(key);
  }
  close(master);
  ASSERT_TRUE(WIFEXITED(status)) << "signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_THAT(screen, HasSubstr("\x1b[?25h\x1b[?1049l"));  // restored
}

// 'q', and Ctrl-C as the terminal turns it into SIGINT.
INSTANTIATE_TEST_SUITE_P(Keys, LocusctlTopTerminalTest,
                         ::testing::Values('q', '\x03'));

TEST_F(LocusctlTest, ExplainThreadAndIrq) {
  ProcessResult r = Ctl({"explain", "1234"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("thread 1234 (nginx worker)"));
  EXPECT_THAT(r.out, HasSubstr("pin tid 1234 (pid 1200) to node 1 cpus 2-3: "
                               "82% remote faults on node 1 [dry-run]"));
  r = Ctl({"explain", "irq:45"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("irq 45 (virtio1-input.0)"));
  EXPECT_THAT(r.out, HasSubstr("converged"));
}

TEST_F(LocusctlTest, ExplainUnknownAndMalformed) {
  ProcessResult r = Ctl({"explain", "99"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("explain: not found: the agent has no record"));
  r = Ctl({"explain", "irq:x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("explain wants a TID or irq:N, not 'irq:x'"));
}

// A look-alike: the reason reaches the user, and it fails like any other
// process that is not a target.
TEST_F(LocusctlTest, ExplainSaysWhyALookAlikeIsNotATarget) {
  ProcessResult r = Ctl({"explain", "4242"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, ::testing::IsEmpty());
  EXPECT_THAT(r.err, HasSubstr("explain: not found: pid 4242 (nginx): not "
                               "trusted as a target: its executable "
                               "/tmp/x/nginx is owned by uid 65534, not root"));
}

// What the agent says reaches the terminal on one line, with nothing a
// terminal acts on, whatever the look-alike's path holds.
TEST_F(LocusctlTest, ExplainShowsALookAlikesPathInert) {
  ProcessResult r = Ctl({"explain", "4343"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("/tmp/a\\n\\x1b[2J\\neverything restored; "
                               "bye/nginx is owned by uid 1000"));
}

TEST_F(LocusctlTest, ProbeShowsFeatures) {
  ProcessResult r = Ctl({"probe"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("kernel 6.18.0-test"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("fentry +no +EPERM"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("tp_btf +yes"));
}

TEST_F(LocusctlTest, EveryCommandHasHelp) {
  for (const char* command :
       {"status", "watch", "top", "explain", "policy", "mode", "restore",
        "probe", "doctor", "experiment"}) {
    ProcessResult r = RunProcess({LOCUSCTL_PATH, command, "--help"});
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_THAT(
        r.out,
        HasSubstr(std::string("usage: locusctl [--socket=PATH] ") + command))
        << command;
  }
  ProcessResult r = RunProcess({LOCUSCTL_PATH, "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("watch [--count=N] [--json]"));
}

// The host's checks run here; then the agent's line says it answered, and
// in which mode. The exit code follows the FAIL lines (a non-root run lacks
// the capabilities).
TEST_F(LocusctlTest, DoctorSaysTheAgentAnswersAndItsMode) {
  ProcessResult r = Ctl({"doctor"});
  EXPECT_THAT(r.out, HasSubstr("  capabilities: "));
  EXPECT_THAT(r.out, HasSubstr("OK    agent: locusd answers on " +
                               server_->socket_path() + ", mode "));
  bool failed = r.out.find("FAIL  ") != std::string::npos;
  EXPECT_EQ(r.exit_code, failed ? 1 : 0) << r.out << r.err;
}

TEST_F(LocusctlTest, OutputThatCannotBeWrittenFails) {
  // As a shell redirects it: `locusctl status > /dev/full`.
  for (const char* command : {"status", "watch --count=2", "probe --json"}) {
    ProcessResult r = RunProcess(
        {"/bin/sh", "-c",
         absl::StrCat(LOCUSCTL_PATH, " --socket=", server_->socket_path(), " ",
                      command, " > /dev/full")});
    EXPECT_EQ(r.exit_code, 1) << command;
    EXPECT_EQ(r.err,
              "locusctl: cannot write the output: No space left on device\n")
        << command;
  }
}

TEST_F(LocusctlTest, NonFiniteTimeoutIsRefused) {
  for (const char* timeout :
       {"--timeout=nan", "--timeout=inf", "--timeout=-2"}) {
    ProcessResult r = Ctl({timeout, "status"});
    EXPECT_EQ(r.exit_code, 2) << timeout;
    EXPECT_THAT(r.err,
                HasSubstr("--timeout wants a finite number of seconds greater "
                          "than 0"))
        << timeout;
    EXPECT_EQ(r.out, "") << "nothing asked of the daemon";
  }
}

TEST_F(LocusctlTest, ExperimentStartSendsTheOptionsAndSaysWhatStarted) {
  ProcessResult r =
      Ctl({"experiment", "start", "--duration=1h", "--interval=15s", "--aa",
           "--seed=9", "--reason=canary"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("started experiment exp-test (A/A: neither arm "
                        "treated): 4 treated and 4 control workers, 1h in "
                        "intervals of 15s, seed 9\n"));
  r = Ctl({"experiment", "start"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<v1::StartExperimentRequest> sent = controller_.start_requests();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].duration().seconds(), 3600);
  EXPECT_EQ(sent[0].interval().seconds(), 15);
  EXPECT_TRUE(sent[0].aa());
  EXPECT_EQ(sent[0].seed(), 9u);
  EXPECT_EQ(sent[0].reason(), "canary");
  // Nothing given: the agent's defaults.
  EXPECT_FALSE(sent[1].has_duration());
  EXPECT_FALSE(sent[1].has_interval());
  EXPECT_FALSE(sent[1].aa());
  EXPECT_EQ(sent[1].reason(), "locusctl experiment start");

  r = Ctl({"experiment", "start", "--design=switchback", "--block=2m",
           "--duration=16m", "--interval=10s"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  sent = controller_.start_requests();
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[2].design(), "switchback");
  EXPECT_EQ(sent[2].block().seconds(), 120);
  EXPECT_THAT(r.out, HasSubstr("started experiment exp-test (switchback: the "
                               "whole host, Locus on and off by block): 8 "
                               "workers, blocks of 2m, 16m in intervals of "
                               "10s"));
}

TEST_F(LocusctlTest, ExperimentStatusTextAndJson) {
  controller_.set_get_reply(SampleExperimentReport());
  ProcessResult r = Ctl({"experiment", "status"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::StartsWith(
                         "VERDICT: Locus: +3.1 % work per CPU-second"));
  EXPECT_THAT(r.out, HasSubstr("+3.1 % [+1.2, +5.0], significant"));
  EXPECT_THAT(r.out, HasSubstr("  ngx\\x1b[2J\\nroot#\n"));
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  r = Ctl({"experiment", "status", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  v1::ExperimentReport report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &report).ok())
      << r.out;
  EXPECT_EQ(report.units(1).comm(), kHostileComm);
  EXPECT_EQ(report.intervals(), 180u);
}

TEST_F(LocusctlTest, ExperimentErrorsPassThrough) {
  ProcessResult r = Ctl({"experiment", "status"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "locusctl: experiment status: not found: no experiment has run "
            "since the agent started\n");
  r = Ctl({"experiment", "stop"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "locusctl: experiment stop: failed precondition: no experiment is "
            "running\n");
  ASSERT_EQ(controller_.stop_requests().size(), 1u);
  EXPECT_EQ(controller_.stop_requests()[0].reason(),
            "locusctl experiment stop");
  controller_.set_start_reply(
      absl::FailedPreconditionError("an experiment runs already: exp-1"));
  r = Ctl({"experiment", "start"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("experiment start: failed precondition: an "
                               "experiment runs already: exp-1"));
  EXPECT_EQ(r.out, "");
}

TEST_F(LocusctlTest, ExperimentStopPrintsTheFinalReport) {
  v1::ExperimentReport stopped = SampleExperimentReport();
  stopped.set_state(v1::EXPERIMENT_STATE_STOPPED);
  controller_.set_stop_reply(stopped);
  ProcessResult r = Ctl({"experiment", "stop", "--reason=p99 alarm"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("experiment exp-20261202-173012: stopped"));
  EXPECT_EQ(controller_.stop_requests().back().reason(), "p99 alarm");
}

// A typo never reaches the agent.
TEST_F(LocusctlTest, ExperimentBadDurationIsAUsageError) {
  ProcessResult r = Ctl({"experiment", "start", "--duration=30"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--duration wants a duration greater than 0 "
                               "and at most 30 days (720h) such as 90s, 10m "
                               "or 1h30m, not '30'"));
  r = Ctl({"experiment", "start", "--interval=10sec"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--interval wants a duration"));
  EXPECT_THAT(r.err, HasSubstr("not '10sec'"));
  EXPECT_TRUE(controller_.start_requests().empty());
}

TEST_F(LocusctlTest, WatchShowsTheRunningExperiment) {
  v1::ExperimentReport running = SampleExperimentReport();
  running.set_state(v1::EXPERIMENT_STATE_RUNNING);
  running.set_intervals(12);
  running.mutable_remaining()->set_seconds(1680);
  running.clear_units();
  publisher_->SetExperiment(running);
  ProcessResult r = Ctl({"watch", "--count=3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int lines = 0;
  for (const std::string& line : SplitLines(r.out)) {
    if (absl::StartsWith(line,
                         "  experiment exp-20261202-173012 running A/B, "
                         "12 of 180 intervals, 28m left; work per "
                         "CPU-second +3.1 % [+1.2, +5.0], significant")) {
      ++lines;
    }
  }
  // The first message may predate SetExperiment by a tick.
  EXPECT_GE(lines, 2) << r.out;
}

TEST(LocusctlVersion, PrintsTheVersionAndBuild) {
  ProcessResult r = RunProcess({LOCUSCTL_PATH, "--version"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(
      r.out, testing::MatchesRegex("locusctl [0-9]+\\.[0-9]+\\.[0-9]+ \\(build "
                                   "([0-9a-f]+|unknown)\\)\n"));
}

TEST_F(LocusctlTest, UsageErrorsExitTwo) {
  for (std::vector<std::string> args :
       std::vector<std::vector<std::string>>{{},
                                             {"frobnicate"},
                                             {"watch", "--count=0"},
                                             {"status", "--count=3"},
                                             {"top", "--json"},
                                             {"mode"},
                                             {"mode", "fast"},
                                             {"policy", "lint", "x"},
                                             {"experiment"},
                                             {"experiment", "begin"},
                                             {"status", "--bogus"}}) {
    args.insert(args.begin(), LOCUSCTL_PATH);
    ProcessResult r = RunProcess(args);
    EXPECT_EQ(r.exit_code, 2) << args.size() << " " << r.err;
    EXPECT_THAT(r.err, HasSubstr("locusctl: "));
  }
}

TEST(LocusctlNoDaemon, MissingSocketSaysSo) {
  TempDir dir;
  std::string path = dir.File("locusd.sock");
  ProcessResult r = RunProcess({LOCUSCTL_PATH, "--socket=" + path, "status"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "locusctl: is locusd running? socket " + path +
                       ": No such file or directory\n");
  r = RunProcess({LOCUSCTL_PATH, "--socket", path, "watch", "--count=1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("is locusd running?"));
}

TEST(LocusctlNoDaemon, DeadSocketSaysSo) {
  TempDir dir;
  std::string path = dir.File("locusd.sock");
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  close(fd);  // the file stays, nobody listens: a crashed daemon
  ProcessResult r = RunProcess({LOCUSCTL_PATH, "--socket=" + path, "status"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "locusctl: is locusd running? socket " + path +
                       ": Connection refused\n");
}

TEST(LocusctlPolicy, ChecksAFileWithoutTheDaemon) {
  TempDir dir;
  std::string good = dir.File("good.yaml");
  std::ofstream(good) << "# the default policy\n";
  ProcessResult r = RunProcess({LOCUSCTL_PATH, "policy", "check", good});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, good + ": ok\n");

  std::string bad = dir.File("bad.yaml");
  std::ofstream(bad) << "no_such_key: 1\n";
  r = RunProcess({LOCUSCTL_PATH, "policy", "check", bad});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(bad + ":1:"));

  r = RunProcess({LOCUSCTL_PATH, "policy", "check", dir.File("missing.yaml")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(r.err.empty());
}

}  // namespace
}  // namespace locus
