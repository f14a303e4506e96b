// Which numad the real ops take (issue #39): a pid file only root may
// write names it; without one, the single root numad in /proc; a user's
// process named numad never. On a fixture /proc; whether numad's queue
// exists on this machine does not matter: Find then fails naming the pid it
// took.
#include "agent/act/neighbours/numad_queue.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/neighbours/fixture_process.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class NumadQueueTest : public ::testing::Test {
 protected:
  std::string proc() const { return tree_.root() + "/proc"; }
  std::string pid_file() const { return tree_.root() + "/run/numad.pid"; }
  void PidFile(int pid, mode_t mode) {
    tree_.Write("run/numad.pid", absl::StrCat(pid, "\n"));
    chmod(pid_file().c_str(), mode);
  }
  // The pid Find took: its answer, or the numad its error names.
  std::string Taken(NumadOps& ops) {
    auto found = ops.Find();
    if (!found.ok()) return std::string(found.status().message());
    if (!found->has_value()) return "none";
    return absl::StrCat("numad (pid ", (*found)->pid, ")");
  }

  TempTree tree_;
};

TEST_F(NumadQueueTest, AUsersNumadIsNoneEvenWithoutAPidFile) {
  WriteFixtureProcess(
      proc(), {.pid = 90, .comm = "numad", .uid = 65534, .euid = 65534});
  auto ops = MakeNumadQueueOps(proc(), pid_file());
  EXPECT_EQ(Taken(*ops), "none");
  EXPECT_THAT(ops->LookAlikes(),
              ElementsAre(HasSubstr("a process named numad (pid 90, uid "
                                    "65534) is not root's")));
  // Named by a pid file of root's: still not numad.
  PidFile(90, 0644);
  ops = MakeNumadQueueOps(proc(), pid_file());
  EXPECT_EQ(Taken(*ops), "none");
}

TEST_F(NumadQueueTest, TheRootNumadIsFoundBesideALookAlike) {
  WriteFixtureProcess(
      proc(), {.pid = 90, .comm = "numad", .uid = 65534, .euid = 65534});
  WriteFixtureProcess(proc(), {.pid = 91, .comm = "numad"});
  auto ops = MakeNumadQueueOps(proc(), pid_file());
  EXPECT_THAT(Taken(*ops), HasSubstr("numad (pid 91)"));
  EXPECT_THAT(ops->LookAlikes(), ElementsAre(HasSubstr("pid 90")));
}

// Two root processes named numad (the daemon, and a `numad -x` client for a
// moment): the pid file decides, when only root could have written it.
TEST_F(NumadQueueTest, APidFileOthersMayWriteIsNotBelieved) {
  WriteFixtureProcess(proc(), {.pid = 91, .comm = "numad"});
  WriteFixtureProcess(proc(), {.pid = 92, .comm = "numad"});
  PidFile(92, 0644);
  auto ops = MakeNumadQueueOps(proc(), pid_file());
  if (geteuid() == 0) {
    EXPECT_THAT(Taken(*ops), HasSubstr("numad (pid 92)"));
    EXPECT_THAT(ops->LookAlikes(), IsEmpty());
  }
  PidFile(92, 0666);
  ops = MakeNumadQueueOps(proc(), pid_file());
  EXPECT_THAT(Taken(*ops), HasSubstr("2 numad processes run as root"));
  EXPECT_THAT(ops->LookAlikes(),
              ElementsAre(AllOf(HasSubstr(pid_file()), HasSubstr("mode 0666"),
                                HasSubstr("refused"))));
  if (geteuid() != 0) return;
  PidFile(92, 0644);
  ASSERT_EQ(chown(pid_file().c_str(), 65534, 65534), 0);
  ops = MakeNumadQueueOps(proc(), pid_file());
  EXPECT_THAT(Taken(*ops), HasSubstr("2 numad processes run as root"));
  EXPECT_THAT(ops->LookAlikes(), ElementsAre(HasSubstr("uid 65534")));
}

}  // namespace
}  // namespace locus
