// Debian's own numad, started by the test: what Locus sends through its
// message queue is what numad logs it did (numad cannot be asked for its
// lists; its log is the only witness), and a queue others could write is
// refused. Needs root (the queue is root's) and /usr/bin/numad
// (deploy/deps.sh installs it).
#include <signal.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "agent/act/neighbours/numad_exclusions.h"
#include "agent/act/neighbours/numad_queue.h"
#include "agent/act/neighbours/process_finder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/neighbours/look_alike.h"
#include "tests/common/process_util.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kNumad[] = "/usr/bin/numad";
constexpr char kPidFile[] = "/run/numad.pid";
constexpr char kLog[] = "/var/log/numad.log";

int32_t PidFromFile() {
  int32_t pid = 0;
  std::string text = ReadAll(kPidFile);
  return absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &pid) ? pid : 0;
}

class NumadPrivilegedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "numad's queue is root's: run as root";
    if (access(kNumad, X_OK) != 0) {
      GTEST_SKIP() << kNumad << " is missing: deploy/deps.sh test installs it";
    }
    if (const int32_t running = PidFromFile();
        running > 0 &&
        access(absl::StrCat("/proc/", running).c_str(), F_OK) == 0) {
      GTEST_SKIP() << "a numad already runs (pid " << running
                   << "); this test starts its own";
    }
    log_start_ = ReadAll(kLog).size();
    // numad daemonizes: the parent exits once the child is forked, and the
    // child writes its pid file.
    const pid_t parent = Spawn({kNumad, "-i", "60"}, tree_.root() + "/out");
    ASSERT_GT(parent, 0);
    ASSERT_TRUE(WaitUntil(
        [&] {
          numad_ = PidFromFile();
          return numad_ > 0;
        },
        absl::Seconds(10)))
        << ReadAll(tree_.root() + "/out");
    Stop(parent, 0);
  }

  void TearDown() override {
    if (numad_ > 0) {
      kill(numad_, SIGTERM);
      WaitUntil(
          [&] {
            return access(absl::StrCat("/proc/", numad_).c_str(), F_OK) != 0;
          },
          absl::Seconds(10));
    }
  }

  // numad logs what it did with each command, from its message thread.
  bool Logged(const std::string& line) {
    return WaitUntil(
        [&] {
          return ReadAll(kLog).find(line, log_start_) != std::string::npos;
        },
        absl::Seconds(10));
  }

  TempTree tree_;
  int32_t numad_ = 0;
  size_t log_start_ = 0;
};

TEST_F(NumadPrivilegedTest, ExcludesAndHandsBackAWorker) {
  IdleChild worker;
  std::unique_ptr<NumadOps> ops = MakeNumadQueueOps();
  auto found = ops->Find();
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->pid, numad_);

  auto journal = Journal::Open({tree_.root() + "/journal"});
  ASSERT_TRUE(journal.ok()) << journal.status();
  NumadExclusions exclusions(*ops, **journal);
  exclusions.Tick({worker.pid()});
  EXPECT_EQ(exclusions.state().problem, "");
  EXPECT_TRUE(exclusions.state().excluded.count(worker.pid()));
  EXPECT_TRUE(Logged(
      absl::StrCat("Adding PID ", worker.pid(), " to exclusion PID list")))
      << ReadAll(kLog).substr(log_start_);

  exclusions.Tick({});
  EXPECT_TRUE(Logged(
      absl::StrCat("Removing PID ", worker.pid(), " from explicit PID lists")))
      << ReadAll(kLog).substr(log_start_);
  EXPECT_TRUE((*journal)->contents().numad_exclusions.empty());
  EXPECT_EQ(access(absl::StrCat("/proc/", numad_).c_str(), F_OK), 0)
      << "numad must survive what Locus sends";
}

TEST_F(NumadPrivilegedTest, RestoreHandsBackWhatACrashedLocusLeft) {
  IdleChild worker;
  std::unique_ptr<NumadOps> ops = MakeNumadQueueOps();
  ASSERT_TRUE(ops->Find().ok());
  ASSERT_TRUE(
      ops->Send(NumadInstance{numad_}, kNumadExclude, worker.pid()).ok());
  std::vector<std::string> messages, errors;
  std::map<int32_t, int32_t> kept;
  RestoreNumadExclusions({{worker.pid(), numad_}}, *ops, &messages, &errors,
                         &kept);
  EXPECT_TRUE(errors.empty()) << errors[0];
  EXPECT_TRUE(kept.empty());
  EXPECT_TRUE(Logged(
      absl::StrCat("Removing PID ", worker.pid(), " from explicit PID lists")));
}

TEST_F(NumadPrivilegedTest, AQueueOthersMayWriteIsRefused) {
  const int queue = msgget(kNumadQueueKey, 0);
  ASSERT_GE(queue, 0);
  msqid_ds info{};
  ASSERT_EQ(msgctl(queue, IPC_STAT, &info), 0);
  const unsigned short mode = info.msg_perm.mode;
  info.msg_perm.mode = 0662;
  ASSERT_EQ(msgctl(queue, IPC_SET, &info), 0);
  std::unique_ptr<NumadOps> ops = MakeNumadQueueOps();
  auto found = ops->Find();
  info.msg_perm.mode = mode;
  ASSERT_EQ(msgctl(queue, IPC_SET, &info), 0);
  ASSERT_FALSE(found.ok());
  EXPECT_THAT(found.status().message(), HasSubstr("not root's alone"));
  EXPECT_TRUE(ops->Find().ok()) << "fine again once it is root's alone";
}

TEST_F(NumadPrivilegedTest, AStoppedNumadIsNoLongerFound) {
  std::unique_ptr<NumadOps> ops = MakeNumadQueueOps();
  ASSERT_TRUE(ops->Find().ok());
  kill(numad_, SIGTERM);
  ASSERT_TRUE(WaitUntil(
      [&] { return access(absl::StrCat("/proc/", numad_).c_str(), F_OK) != 0; },
      absl::Seconds(10)));
  numad_ = 0;
  auto found = ops->Find();
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_FALSE(found->has_value());
}

// Issue #39 item 1: numad's root-owned queue left behind, no pid file, and
// a user's process named numad: it is not numad. Nothing is journaled under
// its pid, nothing is queued, and it is named as refused. Needs root, not
// numad (the queue is made when none was left).
TEST(NumadLookAlikeTest, AUsersNumadBesideItsQueueIsNotNumad) {
  if (geteuid() != 0) GTEST_SKIP() << "numad's queue is root's: run as root";
  auto running = FindDaemons("/proc", "numad");
  if (!running.ok() || !running->genuine.empty()) {
    GTEST_SKIP() << "a numad runs here";
  }
  int queue = msgget(kNumadQueueKey, 0);
  const bool made = queue < 0;
  if (made) queue = msgget(kNumadQueueKey, IPC_CREAT | IPC_EXCL | 0660);
  ASSERT_GE(queue, 0);
  msqid_ds before{};
  ASSERT_EQ(msgctl(queue, IPC_STAT, &before), 0);
  if (before.msg_perm.uid != 0 || before.msg_perm.cuid != 0) {
    GTEST_SKIP() << "the queue at 0xdeadbeef is not root's";
  }
  LookAlike look_alike("numad");
  ASSERT_GT(look_alike.pid(), 0) << "setpriv could not start it as nobody";
  IdleChild worker;
  TempTree tree;
  auto journal = Journal::Open({tree.root() + "/journal"});
  ASSERT_TRUE(journal.ok()) << journal.status();
  std::unique_ptr<NumadOps> ops =
      MakeNumadQueueOps("/proc", tree.root() + "/numad.pid");
  NumadExclusions exclusions(*ops, **journal);
  exclusions.Tick({worker.pid()});
  msqid_ds after{};
  ASSERT_EQ(msgctl(queue, IPC_STAT, &after), 0);
  if (made) msgctl(queue, IPC_RMID, nullptr);
  EXPECT_FALSE(exclusions.state().running);
  EXPECT_TRUE((*journal)->contents().numad_exclusions.empty());
  EXPECT_EQ(after.msg_qnum, before.msg_qnum) << "nothing queued";
  EXPECT_THAT(
      exclusions.state().look_alikes,
      ElementsAre(HasSubstr(absl::StrCat("a process named numad (pid ",
                                         look_alike.pid(), ", uid 65534)"))));
}

}  // namespace
}  // namespace locus
