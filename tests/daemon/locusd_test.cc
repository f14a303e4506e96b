// locusd as a real process on this machine, driven through locusctl: the
// daemon starts in dry run with a temporary socket, journal and policy file,
// answers, streams, survives a bad policy, takes a good one, refuses a
// non-root peer, and exits 0 on SIGTERM.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "locus/v1/agent.pb.h"
#include "tests/agent/agent_test_util.h"
#include "tests/common/process_util.h"
#include "tests/common/test_paths.h"

namespace locus {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

void WriteAtomically(const std::string& path, const std::string& text) {
  // Write-and-rename, as editors do.
  std::string tmp = path + ".tmp";
  std::ofstream(tmp) << text;
  ASSERT_EQ(rename(tmp.c_str(), path.c_str()), 0);
}

class LocusdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "locusd needs root (BPF, affinity)";
    policy_ = dir_.File("policy.yaml");
    socket_ = dir_.File("locusd.sock");
    log_ = dir_.File("locusd.log");
    WriteAtomically(policy_, "mode: dry_run\n");
    pid_ = fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      std::string socket = "--socket=" + socket_;
      std::string journal = "--journal=" + dir_.File("journal");
      std::string policy = "--policy=" + policy_;
      execl(LOCUSD_PATH, LOCUSD_PATH, socket.c_str(), journal.c_str(),
            policy.c_str(), "--tick=200ms", static_cast<char*>(nullptr));
      _exit(127);
    }
    absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (absl::Now() < deadline) {
      if (Ctl({"status"}).exit_code == 0) return;
      absl::SleepFor(absl::Milliseconds(100));
    }
    FAIL() << "locusd did not answer within 20 s; log:\n" << ReadAll(log_);
  }

  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  ProcessResult Ctl(std::vector<std::string> args) {
    args.insert(args.begin(), {LOCUSCTL_PATH, "--socket=" + socket_});
    return RunProcess(args);
  }

  // Polls status until `pred` holds; returns the last status text.
  template <typename Pred>
  std::string WaitForStatus(Pred pred) {
    std::string out;
    absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (absl::Now() < deadline) {
      out = Ctl({"status"}).out;
      if (pred(out)) break;
      absl::SleepFor(absl::Milliseconds(100));
    }
    return out;
  }

  int Terminate() {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  TempDir dir_;
  std::string policy_, socket_, log_;
  pid_t pid_ = -1;
};

TEST_F(LocusdTest, AnswersStreamsAndExitsCleanlyOnSigterm) {
  ProcessResult status = Ctl({"status"});
  EXPECT_THAT(status.out, HasSubstr("dry_run"));
  EXPECT_THAT(status.out, HasSubstr("tp_btf"));

  ProcessResult watch = Ctl({"watch", "--count=3", "--json"});
  ASSERT_EQ(watch.exit_code, 0) << watch.err;
  std::vector<std::string> lines = SplitLines(watch.out);
  ASSERT_EQ(lines.size(), 3u) << watch.out;
  uint64_t previous = 0;
  for (const std::string& line : lines) {
    v1::Metrics m;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(line, &m).ok())
        << line;
    EXPECT_GT(m.tick(), previous);
    previous = m.tick();
    EXPECT_EQ(m.mode(), v1::AGENT_MODE_DRY_RUN);
    EXPECT_GE(m.nodes_size(), 1);
  }

  EXPECT_EQ(Terminate(), 0);
  EXPECT_THAT(ReadAll(log_), HasSubstr("everything restored"));
  EXPECT_NE(access(socket_.c_str(), F_OK), 0) << "socket removed on exit";
}

TEST_F(LocusdTest, ASecondDaemonOrRestoreOnTheSameJournalIsRefused) {
  ProcessResult second =
      RunProcess({LOCUSD_PATH, "--socket=" + dir_.File("other.sock"),
                  "--journal=" + dir_.File("journal"), "--policy=" + policy_});
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_THAT(second.err, HasSubstr("another locusd is running"));
  ProcessResult restore = RunProcess(
      {LOCUSD_PATH, "--restore", "--journal=" + dir_.File("journal")});
  EXPECT_EQ(restore.exit_code, 1);
  EXPECT_THAT(restore.err, HasSubstr("another locusd is running"));
  EXPECT_EQ(Ctl({"status"}).exit_code, 0) << "the first one still answers";
  EXPECT_EQ(Terminate(), 0);
}

TEST_F(LocusdTest, BadPolicyKeepsTheOldOneAndGoodOneReplacesIt) {
  std::string before = Ctl({"status"}).out;
  ASSERT_THAT(before, HasSubstr("version 1"));

  WriteAtomically(policy_, "mode: dry_run\nstability:\n  dwell_s: -3\n");
  std::string bad = WaitForStatus(
      [](const std::string& s) { return absl::StrContains(s, "error"); });
  EXPECT_THAT(bad, HasSubstr("policy.yaml:3:"));
  EXPECT_THAT(bad, HasSubstr("version 1")) << "the old policy stays";
  EXPECT_THAT(bad, HasSubstr("dry_run"));

  WriteAtomically(policy_, "mode: dry_run\nstability:\n  dwell_s: 60\n");
  std::string good = WaitForStatus(
      [](const std::string& s) { return absl::StrContains(s, "version 2"); });
  EXPECT_THAT(good, HasSubstr("version 2"));
  EXPECT_THAT(good, Not(HasSubstr("last error")));
  EXPECT_EQ(Terminate(), 0);
}

TEST_F(LocusdTest, NonRootPeerIsRefusedSetMode) {
  // Let `nobody` reach the socket at all, so the check that refuses it is
  // the agent's own, not the file mode's.
  ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
  ASSERT_EQ(chmod(socket_.c_str(), 0666), 0);
  ProcessResult refused =
      RunProcess({"/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup",
                  "--clear-groups", LOCUSCTL_PATH, "--socket=" + socket_,
                  "mode", "enforce"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.out + refused.err, HasSubstr("ermission"));
  EXPECT_THAT(Ctl({"status"}).out, HasSubstr("dry_run")) << "mode unchanged";

  ProcessResult root = Ctl({"mode", "enforce"});
  EXPECT_EQ(root.exit_code, 0) << root.err;
  EXPECT_THAT(Ctl({"status"}).out, HasSubstr("enforce"));
  EXPECT_EQ(Terminate(), 0);
}

}  // namespace
}  // namespace locus
