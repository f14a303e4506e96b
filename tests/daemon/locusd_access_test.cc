// Who may drive locusd, and what it may touch (root): its socket belongs to
// --socket_group (0660) or, without that group, to root alone (0600); peers
// outside cannot connect, members may change state; and a busy process the
// policy did not select is never touched while its neighbours are pinned.
// The daemon sees this machine as two nodes (tests/fixtures/split2).
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/journal/journal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/agent_test_util.h"
#include "tests/common/locusd_process.h"
#include "tests/common/process_util.h"
#include "tests/common/test_paths.h"

namespace locus {
namespace {

using ::testing::HasSubstr;

class LocusdAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "locusd needs root";
    if (OnlineCpus().size() < 2) GTEST_SKIP() << "needs 2 online CPUs";
    // Reachable by everyone, so that only the socket's own mode decides.
    ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
    std::ofstream(daemon_.policy()) << FaultPolicy("locus-fault", "dry_run", 8);
  }

  // locusctl as `who` (setpriv arguments; empty: root).
  ProcessResult Ctl(const std::vector<std::string>& who,
                    const std::vector<std::string>& args) {
    std::vector<std::string> argv = {LOCUSCTL_PATH,
                                     "--socket=" + daemon_.socket()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcessAs(who, argv);
  }

  TempDir dir_;
  LocusdProcess daemon_{LOCUSD_PATH, dir_.path()};
};

TEST_F(LocusdAccessTest, SocketBelongsToItsGroupWhoseMembersMayChangeState) {
  struct group* g = getgrnam("nogroup");
  if (g == nullptr) GTEST_SKIP() << "no group 'nogroup' to stand in for locus";
  const gid_t gid = g->gr_gid;
  daemon_.Start({"--socket_group=nogroup"});
  ASSERT_TRUE(daemon_.WaitReady()) << daemon_.log();
  struct stat st;
  ASSERT_EQ(stat(daemon_.socket().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_gid, gid);

  // A member through a supplementary group: may change the mode.
  ProcessResult r =
      Ctl({"--reuid=nobody", "--regid=daemon", absl::StrCat("--groups=", gid)},
          {"mode", "enforce"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("mode enforce"));
  // Not a member, not root: cannot even connect.
  r = Ctl({"--reuid=nobody", "--regid=daemon", "--clear-groups"}, {"status"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("Permission denied"));
  auto status = daemon_.Status();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->mode(), v1::AGENT_MODE_ENFORCE);
  EXPECT_EQ(daemon_.Stop(SIGTERM), 0) << daemon_.log();
}

TEST_F(LocusdAccessTest, WithoutItsGroupTheSocketIsRootsAlone) {
  daemon_.Start({"--socket_group=locus-test-no-such-group"});
  ASSERT_TRUE(daemon_.WaitReady()) << daemon_.log();
  struct stat st;
  ASSERT_EQ(stat(daemon_.socket().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_gid, 0u);
  EXPECT_THAT(daemon_.log(), HasSubstr("no group 'locus-test-no-such-group'"));
  // Not even group root gets in.
  ProcessResult r =
      Ctl({"--reuid=nobody", "--regid=nogroup", "--groups=0"}, {"status"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("Permission denied"));
  r = Ctl({}, {"mode", "enforce"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(daemon_.Stop(SIGTERM), 0) << daemon_.log();
}

// Two families of busy workers, alike but for their name: the policy's are
// pinned, the other's masks stay as they were, it never appears in an action
// or in the journal.
TEST_F(LocusdAccessTest, ProcessThePolicyDidNotSelectIsNeverTouched) {
  std::ofstream(daemon_.policy()) << FaultPolicy("locus-fault", "enforce", 8);
  TargetFamily selected(FAULT_TARGET_PATH, "locus-fault", 2, 2,
                        dir_.File("selected.log"));
  TargetFamily other(FAULT_TARGET_PATH, "locus-other", 2, 2,
                     dir_.File("other.log"));
  ASSERT_TRUE(selected.ok() && other.ok());
  const auto selected_before = AffinityOfAll(selected.workers());
  const auto other_before = AffinityOfAll(other.workers());
  std::set<int32_t> other_ids(other.workers().begin(), other.workers().end());
  other_ids.insert(other.master());
  for (const auto& [tid, cpus] : other_before) other_ids.insert(tid);

  daemon_.Start({});
  ASSERT_TRUE(daemon_.WaitReady()) << daemon_.log();
  ASSERT_TRUE(WaitUntil(
      [&] { return AffinityOfAll(selected.workers()) != selected_before; },
      absl::Seconds(30)))
      << "the selected workers were never pinned, so this proves nothing\n"
      << daemon_.log();
  // Twenty more ticks, every action and every journal record looked at.
  auto ticks = daemon_.Watch(20, absl::Seconds(30));
  ASSERT_TRUE(ticks.ok()) << ticks.status();
  for (const v1::Metrics& m : *ticks) {
    for (const v1::Action& a : m.actions()) {
      EXPECT_FALSE(other_ids.count(a.pin_thread().pid()) ||
                   other_ids.count(a.pin_thread().tid()) ||
                   other_ids.count(a.migrate_pages().pid()))
          << a.ShortDebugString();
    }
    for (const v1::TaskMetrics& t : m.tasks()) {
      EXPECT_FALSE(other_ids.count(t.pid())) << "pid " << t.pid();
    }
  }
  EXPECT_EQ(AffinityOfAll(other.workers()), other_before);
  auto journal = ReadJournal(daemon_.journal());
  ASSERT_TRUE(journal.ok());
  EXPECT_FALSE(journal->threads.empty());
  for (const auto& [tid, entry] : journal->threads) {
    EXPECT_FALSE(other_ids.count(tid)) << "journal names thread " << tid;
  }
  EXPECT_EQ(daemon_.Stop(SIGTERM), 0) << daemon_.log();
  EXPECT_EQ(AffinityOfAll(selected.workers()), selected_before);
  EXPECT_EQ(AffinityOfAll(other.workers()), other_before);
}

}  // namespace
}  // namespace locus
