#include "agent/daemon/instance_lock.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "agent/journal/journal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::HasSubstr;

// Whether another process can take the lock on `journal_path`: a forked
// child tries and exits 0 when it got it, 1 when it was refused as held.
int ChildTries(const std::string& journal_path) {
  pid_t pid = fork();
  if (pid == 0) {
    absl::StatusOr<InstanceLock> lock = InstanceLock::Acquire(journal_path);
    _exit(lock.ok() ? 0 : absl::IsFailedPrecondition(lock.status()) ? 1 : 2);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(InstanceLockTest, OneHolderPerJournalWhateverPathNamesIt) {
  TempTree tree;
  std::filesystem::create_directories(tree.root() + "/state");
  std::filesystem::create_directory_symlink("state", tree.root() + "/dirlink");
  std::filesystem::create_symlink("state/journal", tree.root() + "/filelink");
  const std::string journal = tree.root() + "/state/journal";
  std::ofstream(journal) << "";
  {
    absl::StatusOr<InstanceLock> held = InstanceLock::Acquire(journal);
    ASSERT_TRUE(held.ok()) << held.status();
    EXPECT_EQ(ChildTries(journal), 1);
    EXPECT_EQ(ChildTries(tree.root() + "/dirlink/journal"), 1);
    EXPECT_EQ(ChildTries(tree.root() + "/filelink"), 1);
    // In this process too: flock conflicts between open files.
    absl::StatusOr<InstanceLock> second =
        InstanceLock::Acquire(tree.root() + "/filelink");
    ASSERT_FALSE(second.ok());
    EXPECT_THAT(std::string(second.status().message()),
                HasSubstr("another locusd is running with this journal"));
    // Another journal in the same directory is another instance.
    EXPECT_EQ(ChildTries(tree.root() + "/state/other"), 0);
  }
  // Released: the next daemon, through any path, gets it; nothing deleted.
  EXPECT_EQ(ChildTries(tree.root() + "/filelink"), 0);
  EXPECT_TRUE(std::filesystem::is_symlink(tree.root() + "/filelink"));
  EXPECT_TRUE(std::filesystem::exists(journal));
}

// A hard link is the same file under another name, with a lock file of
// its own: the journal file's lock, held by the running daemon's Journal,
// refuses it. A daemon with no journal file yet holds the name's lock only.
TEST(InstanceLockTest, AHardLinkToAJournalInUseIsRefused) {
  TempTree tree;
  const std::string journal = tree.root() + "/journal";
  const std::string link = tree.root() + "/hardlink";
  absl::StatusOr<InstanceLock> held = InstanceLock::Acquire(journal);
  ASSERT_TRUE(held.ok()) << held.status();
  auto in_use = Journal::Open(JournalOptions{journal});
  ASSERT_TRUE(in_use.ok());
  ASSERT_TRUE((*in_use)->RecordIrq({5, {0}}).ok());
  ASSERT_EQ(::link(journal.c_str(), link.c_str()), 0);
  EXPECT_EQ(ChildTries(link), 1);
  absl::StatusOr<InstanceLock> second = InstanceLock::Acquire(link);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(
      std::string(second.status().message()),
      HasSubstr(absl::StrCat("another locusd (pid ", getpid(),
                             ") is running with this journal: ", link)));
  // Let go with the Journal: the link's own lock was never taken.
  in_use->reset();
  EXPECT_EQ(ChildTries(link), 0);
  EXPECT_TRUE(std::filesystem::exists(journal));
}

TEST(InstanceLockTest, LinkLoopIsRefused) {
  TempTree tree;
  std::filesystem::create_symlink("loop", tree.root() + "/loop");
  absl::StatusOr<InstanceLock> lock =
      InstanceLock::Acquire(tree.root() + "/loop");
  ASSERT_FALSE(lock.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(lock.status())) << lock.status();
}

}  // namespace
}  // namespace locus
