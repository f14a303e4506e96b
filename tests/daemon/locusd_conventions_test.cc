// locusd as a system service expects to run: under systemd's watchdog, with
// its log reader liable to go away, its mode changed at run time and put
// back to the policy's, and a --version to report.
#include <fcntl.h>
#include <poll.h>
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
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/agent_test_util.h"
#include "tests/common/process_util.h"
#include "tests/common/test_paths.h"

namespace locus {
namespace {

using ::testing::HasSubstr;

// Selects nothing that runs here, so --mode=enforce acts on nothing.
constexpr char kPolicy[] = "mode: dry_run\ntargets:\n  comm: [locus-none]\n";

void WritePolicy(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  std::ofstream(tmp) << text;
  ASSERT_EQ(rename(tmp.c_str(), path.c_str()), 0);
}

class LocusdConventionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "locusd needs root (BPF, affinity)";
    WritePolicy(dir_.File("policy.yaml"), kPolicy);
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  // locusd with `extra` flags and `env` added to the environment; stderr to
  // `stderr_fd` (closed here afterwards), or with stdout to the log file.
  void Start(const std::vector<std::string>& extra,
             const std::vector<std::string>& env = {}, int stderr_fd = -1) {
    std::vector<std::string> args = {LOCUSD_PATH, "--socket=" + socket(),
                                     "--journal=" + dir_.File("journal"),
                                     "--policy=" + dir_.File("policy.yaml"),
                                     "--tick=200ms"};
    args.insert(args.end(), extra.begin(), extra.end());
    pid_ = fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      int log = open(dir_.File("locusd.log").c_str(),
                     O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(log, 1);
      dup2(stderr_fd >= 0 ? stderr_fd : log, 2);
      // As systemd starts it: SIGPIPE not ignored already (this test
      // process may ignore it, and exec keeps that).
      signal(SIGPIPE, SIG_DFL);
      for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    if (stderr_fd >= 0) close(stderr_fd);
  }

  std::string socket() const { return dir_.File("locusd.sock"); }
  ProcessResult Ctl(std::vector<std::string> args) {
    args.insert(args.begin(), {LOCUSCTL_PATH, "--socket=" + socket()});
    return RunProcess(args);
  }
  // Until status answers; false at once if locusd exits.
  bool WaitReady() {
    return WaitUntil([&] { return !Alive() || Ctl({"status"}).exit_code == 0; },
                     absl::Seconds(20), absl::Milliseconds(100)) &&
           Alive();
  }
  // The status text once it contains `want` (or the last one after 10 s).
  std::string StatusOnce(const std::string& want) {
    std::string out;
    WaitUntil(
        [&] {
          out = Ctl({"status"}).out;
          return absl::StrContains(out, want);
        },
        absl::Seconds(10), absl::Milliseconds(100));
    return out;
  }
  bool Alive() { return waitpid(pid_, nullptr, WNOHANG) == 0; }
  int Terminate() {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }

  TempDir dir_;
  pid_t pid_ = -1;
};

TEST_F(LocusdConventionsTest, ALogReaderGoneNeverKillsIt) {
  int fds[2];
  // Close-on-exec, so that locusd holds no read end of its own.
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  Start({}, {}, fds[1]);
  close(fds[0]);  // the reader goes away: every log line now hits EPIPE
  ASSERT_TRUE(WaitReady()) << "locusd died at its first log line";
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(kill(pid_, SIGHUP), 0);  // each logs "SIGHUP → reloading"
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_EQ(Ctl({"mode", "enforce"}).exit_code, 0);  // logs too
  absl::SleepFor(absl::Milliseconds(300));
  ASSERT_TRUE(Alive()) << "killed by SIGPIPE";
  EXPECT_EQ(Ctl({"status"}).exit_code, 0);
  EXPECT_EQ(Terminate(), 0) << "SIGTERM restores and exits 0";
}

TEST_F(LocusdConventionsTest, ATickTheWatchdogCannotCoverIsRefusedAtStart) {
  ProcessResult r =
      RunProcess({"/usr/bin/env", "WATCHDOG_USEC=10000000", LOCUSD_PATH,
                  "--socket=" + socket(), "--journal=" + dir_.File("journal"),
                  "--policy=" + dir_.File("policy.yaml"), "--tick=15s"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--tick=15s is too long for the systemd "
                               "watchdog (WatchdogSec=10s)"));
  EXPECT_THAT(r.err, HasSubstr("shorten --tick or raise WatchdogSec="));
  EXPECT_NE(access(socket().c_str(), F_OK), 0) << "nothing was started";
}

// A datagram socket standing in for systemd's NOTIFY_SOCKET.
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    bound_ = bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~NotifySocket() { close(fd_); }
  bool bound() const { return bound_; }
  // The next message, or "" after `timeout`.
  std::string Next(absl::Duration timeout) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, absl::ToInt64Milliseconds(timeout)) != 1) return "";
    char buf[512];
    ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    return n > 0 ? std::string(buf, n) : "";
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool bound_ = false;
};

TEST_F(LocusdConventionsTest, WatchdogPingsComeBetweenLongTicks) {
  NotifySocket notify(dir_.File("notify.sock"));
  ASSERT_TRUE(notify.bound());
  // A 2 s watchdog, pinged every 0.5 s; ticks of 1 s (the longest it covers).
  Start({"--tick=1s"},
        {"NOTIFY_SOCKET=" + dir_.File("notify.sock"), "WATCHDOG_USEC=2000000"});
  absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (notify.Next(absl::Seconds(1)) != "READY=1") {
    ASSERT_LT(absl::Now(), deadline) << ReadAll(dir_.File("locusd.log"));
  }
  int pings = 0;
  int ticks = 0;
  absl::Time end = absl::Now() + absl::Seconds(4);
  while (absl::Now() < end) {
    std::string message = notify.Next(end - absl::Now());
    pings += message == "WATCHDOG=1";
    ticks += absl::StartsWith(message, "STATUS=tick ");
  }
  EXPECT_GE(pings, 6) << "every 0.5 s for 4 s";
  EXPECT_GT(pings, ticks) << "pinged between ticks, not once per tick";
  EXPECT_EQ(Terminate(), 0);
}

TEST_F(LocusdConventionsTest, StatusSaysWhereTheModeComesFrom) {
  Start({"--mode=enforce"});
  ASSERT_TRUE(WaitReady()) << ReadAll(dir_.File("locusd.log"));
  EXPECT_THAT(Ctl({"status"}).out,
              HasSubstr("mode enforce (--mode flag; policy says dry_run)"));

  ProcessResult policy = Ctl({"mode", "policy"});
  EXPECT_EQ(policy.exit_code, 0) << policy.err;
  EXPECT_THAT(policy.out, HasSubstr("mode dry_run (was enforce); following"));
  EXPECT_THAT(Ctl({"status"}).out, HasSubstr("mode dry_run (policy)"));
  // Following the policy means following its reloads.
  WritePolicy(dir_.File("policy.yaml"),
              "mode: enforce\ntargets:\n  comm: [locus-none]\n");
  EXPECT_THAT(StatusOnce("mode enforce (policy)"),
              HasSubstr("mode enforce (policy)"));

  ProcessResult dry = Ctl({"mode", "dry_run"});
  EXPECT_THAT(dry.out, HasSubstr("a runtime override"));
  EXPECT_THAT(Ctl({"status"}).out,
              HasSubstr("mode dry_run (runtime override; policy says "
                        "enforce)"));
  ASSERT_EQ(Ctl({"mode", "policy"}).exit_code, 0);
  ProcessResult restore = Ctl({"restore"});
  EXPECT_EQ(restore.exit_code, 0) << restore.err;
  EXPECT_THAT(restore.out, HasSubstr("mode set to dry_run (a runtime "
                                     "override"));
  EXPECT_THAT(Ctl({"status"}).out,
              HasSubstr("mode dry_run (runtime override; policy says "
                        "enforce)"));
  EXPECT_EQ(Terminate(), 0);
}

TEST(LocusdVersion, PrintsTheVersionAndBuild) {
  ProcessResult r = RunProcess({LOCUSD_PATH, "--version"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out,
              testing::MatchesRegex("locusd [0-9]+\\.[0-9]+\\.[0-9]+ \\(build "
                                    "([0-9a-f]+|unknown)\\)\n"));
  ProcessResult ctl = RunProcess({LOCUSCTL_PATH, "--version"});
  EXPECT_EQ(ctl.out.substr(ctl.out.find(' ')), r.out.substr(r.out.find(' ')))
      << "one version and build for both binaries";
}

TEST(LocusdHelp, ListsItsFlagsAndExitsZero) {
  ProcessResult r = RunProcess({LOCUSD_PATH, "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("--probe"));
  EXPECT_THAT(r.out, HasSubstr("--tick  (default: \"1s\")"));
  EXPECT_THAT(r.out, testing::Not(HasSubstr("--flagfile"))) << "ours only";
  ProcessResult bad = RunProcess({LOCUSD_PATH, "--no_such_flag"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("no_such_flag"));
}

}  // namespace
}  // namespace locus
