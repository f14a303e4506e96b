// One locusd per journal file, whatever name reaches it (root). A second
// daemon given a hard link to the first one's live journal once took it
// for a crashed run's: it "restored" the first one's changes and deleted
// the link. Now it exits before reading it, naming the first, which goes
// on with its journal and its pins as they were. The daemon sees this
// machine as two nodes (tests/fixtures/split2), so it pins something.
#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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
using ::testing::Not;

TEST(LocusdJournalLockTest, AHardLinkToALiveJournalStartsNoSecondDaemon) {
  if (geteuid() != 0) GTEST_SKIP() << "locusd needs root";
  if (OnlineCpus().size() < 2) GTEST_SKIP() << "needs 2 online CPUs";
  TempDir dir;
  LocusdProcess first(LOCUSD_PATH, dir.path());
  std::ofstream(first.policy()) << FaultPolicy("locus-jlock", "enforce", 8);
  TargetFamily family(FAULT_TARGET_PATH, "locus-jlock", 2, 2,
                      dir.File("family.log"));
  ASSERT_TRUE(family.ok());
  const auto unpinned = AffinityOfAll(family.workers());
  first.Start({});
  ASSERT_TRUE(first.WaitReady()) << first.log();
  // A live journal: the first daemon's pins are in it.
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto journal = ReadJournal(first.journal());
        return journal.ok() && !journal->threads.empty();
      },
      absl::Seconds(30)))
      << "nothing was pinned, so this proves nothing\n"
      << first.log();
  const std::string link = dir.File("journal-hardlink");
  ASSERT_EQ(::link(first.journal().c_str(), link.c_str()), 0);
  const std::string recorded = ReadAll(first.journal());
  const auto pinned = AffinityOfAll(family.workers());

  ProcessResult second =
      RunProcess({LOCUSD_PATH,
                  std::string("--sysfs_root=") + LOCUS_SOURCE_DIR +
                      "/tests/fixtures/split2/sys",
                  "--socket=" + dir.File("second.sock"), "--journal=" + link,
                  "--policy=" + first.policy(), "--tick=100ms"});
  EXPECT_NE(second.exit_code, 0);
  EXPECT_THAT(second.err, HasSubstr(absl::StrCat(
                              "another locusd (pid ", first.pid(),
                              ") is running with this journal: ", link)));
  EXPECT_THAT(second.err, Not(HasSubstr("restored from")));
  // The doctor, given the same name, sees it held as locusd's start did.
  ProcessResult doctor =
      RunProcess({LOCUSD_PATH, "--doctor", "--journal=" + link,
                  "--policy=" + first.policy(),
                  std::string("--sysfs_root=") + LOCUS_SOURCE_DIR +
                      "/tests/fixtures/split2/sys"});
  EXPECT_THAT(doctor.out,
              HasSubstr("a locusd is running with this journal: another "
                        "locusd"))
      << doctor.out << doctor.err;

  // The first still runs, its journal whole under both names, nothing of
  // it undone: the pins stand (a restore would have put back `unpinned`).
  EXPECT_TRUE(first.running());
  EXPECT_TRUE(first.Status().ok()) << first.log();
  EXPECT_TRUE(absl::StartsWith(ReadAll(first.journal()), recorded));
  EXPECT_TRUE(absl::StartsWith(ReadAll(link), recorded));
  auto journal = ReadJournal(first.journal());
  ASSERT_TRUE(journal.ok());
  EXPECT_FALSE(journal->threads.empty());
  for (const auto& [tid, cpus] : pinned) {
    auto was = unpinned.find(tid);
    if (was == unpinned.end() || was->second == cpus) continue;  // not pinned
    EXPECT_NE(ThreadAffinity(tid), was->second) << "thread " << tid;
  }
  // Stopped, it restores everything itself and lets go of the file.
  EXPECT_EQ(first.Stop(SIGTERM), 0) << first.log();
  EXPECT_EQ(AffinityOfAll(family.workers()), unpinned);
}

}  // namespace
}  // namespace locus
