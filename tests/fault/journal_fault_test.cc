// The journal on a read-only filesystem (root: a tmpfs remounted read-only).
// A restore that could not delete the journal afterwards would run again at
// every start, over whatever the admin changed since: it is refused before
// anything is touched, with the reason, every time.
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>

#include "agent/act/restore.h"
#include "agent/daemon/restore_mode.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/fake_kernel_ops.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ReadOnlyJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
    mount_ = tree_.root() + "/state";
    std::filesystem::create_directories(mount_);
    ASSERT_EQ(mount("tmpfs", mount_.c_str(), "tmpfs", 0, "size=1m"), 0)
        << strerror(errno);
    mounted_ = true;
    options_.path = mount_ + "/journal";
    {
      auto journal = Journal::Open(options_);
      ASSERT_TRUE(journal.ok());
      ASSERT_TRUE((*journal)->RecordThread({10, 11, 1, {0, 1}}).ok());
      ASSERT_TRUE((*journal)->RecordIrq({38, {0, 1}}).ok());
    }
    ASSERT_EQ(mount(nullptr, mount_.c_str(), nullptr, MS_REMOUNT | MS_RDONLY,
                    nullptr),
              0)
        << strerror(errno);
    threads_.threads[11] = {1, {2}, {0, 1, 2, 3}};
    irqs_.affinity[38] = {3};
  }
  void TearDown() override {
    if (mounted_) umount2(mount_.c_str(), MNT_DETACH);
  }
  TempTree tree_;
  std::string mount_;
  bool mounted_ = false;
  JournalOptions options_;
  FakeThreadOps threads_;
  FakeIrqOps irqs_;
};

TEST_F(ReadOnlyJournalTest, RestoreIsRefusedBeforeAnythingChanges) {
  // Twice, as at two starts in a row: neither changes anything.
  for (int start = 0; start < 2; ++start) {
    auto report = RestoreJournal(options_, threads_, irqs_);
    ASSERT_FALSE(report.ok());
    EXPECT_TRUE(absl::IsFailedPrecondition(report.status()));
    EXPECT_THAT(std::string(report.status().message()),
                HasSubstr("not restoring: the journal " + options_.path));
    EXPECT_THAT(std::string(report.status().message()),
                HasSubstr("Read-only file system"));
    EXPECT_EQ(threads_.set_calls, 0);
    EXPECT_THAT(threads_.threads[11].affinity, ElementsAre(2));
    EXPECT_THAT(irqs_.affinity[38], ElementsAre(3));
    EXPECT_EQ(access(options_.path.c_str(), F_OK), 0);
  }
}

// What `locusd --restore` and the daemon's start run: it fails (the daemon
// does not start), and the journal stays for a restore once it is writable.
TEST_F(ReadOnlyJournalTest, RestoreModeFailsAndKeepsTheJournal) {
  const std::string missing = tree_.root() + "/nothing";
  EXPECT_EQ(RunRestore(options_.path, missing, missing), 1);
  EXPECT_EQ(access(options_.path.c_str(), F_OK), 0);
  // Made writable again, the journal is restored and removed.
  ASSERT_EQ(mount(nullptr, mount_.c_str(), nullptr, MS_REMOUNT, nullptr), 0);
  auto report = RestoreJournal(options_, threads_, irqs_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->threads_restored, 1);
  EXPECT_THAT(irqs_.affinity[38], ElementsAre(0, 1));
  EXPECT_NE(access(options_.path.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace locus
