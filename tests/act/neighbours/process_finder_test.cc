// Who is irqbalance, who is numad (issue #39): a process of that name is
// the daemon only when root runs it from a binary only root may change.
// On a fixture /proc whose exe links name real files.
#include "agent/act/neighbours/process_finder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>

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
using ::testing::Not;

class ProcessFinderTest : public ::testing::Test {
 protected:
  std::string proc() const { return tree_.root() + "/proc"; }
  void Process(const FixtureProcess& p) { WriteFixtureProcess(proc(), p); }
  // A binary of the test's own, mode `mode`.
  std::string Binary(const std::string& name, mode_t mode) {
    tree_.Write("bin/" + name, "#!/bin/true\n");
    const std::string path = tree_.root() + "/bin/" + name;
    chmod(path.c_str(), mode);
    return path;
  }
  DaemonSearch Search(const std::string& comm) {
    auto found = FindDaemons(proc(), comm);
    EXPECT_TRUE(found.ok()) << found.status();
    return found.ok() ? *found : DaemonSearch();
  }

  TempTree tree_;
};

TEST_F(ProcessFinderTest, RootsProcessOfRootsBinaryIsTheDaemon) {
  Process({.pid = 77, .comm = "irqbalance"});
  Process({.pid = 5, .comm = "locusd"});
  DaemonSearch found = Search("irqbalance");
  EXPECT_THAT(found.genuine, ElementsAre(77));
  EXPECT_THAT(found.refused, IsEmpty());
  EXPECT_TRUE(IsDaemon(proc(), 77, "irqbalance"));
  EXPECT_FALSE(IsDaemon(proc(), 5, "irqbalance"));
}

TEST_F(ProcessFinderTest, AUsersLookAlikeBesideItIsRefusedAndNamed) {
  Process({.pid = 77, .comm = "irqbalance"});
  Process({.pid = 78, .comm = "irqbalance", .uid = 65534, .euid = 65534});
  DaemonSearch found = Search("irqbalance");
  EXPECT_THAT(found.genuine, ElementsAre(77));
  EXPECT_THAT(found.refused,
              ElementsAre(AllOf(
                  HasSubstr("a process named irqbalance (pid 78, uid 65534) "
                            "is not root's"),
                  HasSubstr("refused"))));
  Identity identity = Identify(proc(), 78, "irqbalance");
  EXPECT_TRUE(identity.named);
  EXPECT_FALSE(identity.genuine);
  // Alone, it is no irqbalance at all.
  tree_.Remove("proc/77/stat");
  found = Search("irqbalance");
  EXPECT_THAT(found.genuine, IsEmpty());
  EXPECT_THAT(found.refused, ElementsAre(HasSubstr("pid 78")));
}

TEST_F(ProcessFinderTest, ASetuidRootBinaryStartedByAUserIsRefused) {
  Process({.pid = 90, .comm = "numad", .uid = 1000, .euid = 0});
  Process({.pid = 91, .comm = "numad", .uid = 0, .euid = 1000});
  DaemonSearch found = Search("numad");
  EXPECT_THAT(found.genuine, IsEmpty());
  EXPECT_THAT(found.refused, ElementsAre(HasSubstr("uid 1000 (effective 0)"),
                                         HasSubstr("uid 0 (effective 1000)")));
}

TEST_F(ProcessFinderTest, RootRunningABinaryOthersMayWriteIsRefused) {
  Process({.pid = 77, .comm = "irqbalance", .exe = Binary("irqbalance", 0775)});
  DaemonSearch found = Search("irqbalance");
  EXPECT_THAT(found.genuine, IsEmpty());
  EXPECT_THAT(
      found.refused,
      ElementsAre(AllOf(HasSubstr("pid 77, uid 0"),
                        HasSubstr("may be written by group or others"))));
  Process({.pid = 77, .comm = "irqbalance", .exe = Binary("irqb", 0755)});
  if (geteuid() == 0) {
    // A binary its owner may change: the owner is who runs it, really.
    ASSERT_EQ(chown((tree_.root() + "/bin/irqb").c_str(), 65534, 65534), 0);
    EXPECT_THAT(Search("irqbalance").refused,
                ElementsAre(HasSubstr("is owned by uid 65534, not root")));
  } else {
    EXPECT_THAT(Search("irqbalance").refused,
                ElementsAre(HasSubstr("not root")));
  }
  // No binary to look at (its link unreadable): not shown to be root's.
  Process({.pid = 77, .comm = "irqbalance", .exe = tree_.root() + "/gone"});
  EXPECT_THAT(Search("irqbalance").refused,
              ElementsAre(HasSubstr("its executable")));
}

TEST_F(ProcessFinderTest, WhatIsRefusedIsPrintable) {
  Process(
      {.pid = 77, .comm = "irqbalance", .exe = Binary("x\n\x1b[2Jy", 0777)});
  DaemonSearch found = Search("irqbalance");
  ASSERT_EQ(found.refused.size(), 1u);
  EXPECT_THAT(found.refused[0],
              AllOf(Not(HasSubstr("\n")), Not(HasSubstr("\x1b"))));
}

TEST_F(ProcessFinderTest, ZombiesAndUnreadableStatusAreNotTheDaemon) {
  Process({.pid = 77, .comm = "irqbalance", .state = 'Z'});
  EXPECT_FALSE(Identify(proc(), 77, "irqbalance").named);
  DaemonSearch found = Search("irqbalance");
  EXPECT_THAT(found.genuine, IsEmpty());
  EXPECT_THAT(found.refused, IsEmpty()) << "a zombie is no one";
  Process({.pid = 77, .comm = "irqbalance"});
  tree_.Write("proc/77/status", "Name:\tirqbalance\n");  // cut short
  EXPECT_THAT(Search("irqbalance").refused,
              ElementsAre(HasSubstr("no Uid line")));
  tree_.Remove("proc/77/status");
  EXPECT_FALSE(IsDaemon(proc(), 77, "irqbalance"));
}

// Issue #39: the check at every tick reads an unchanged process's stat
// only, not its status and binary again; a pid another process took (its
// start time differs) is judged again.
TEST_F(ProcessFinderTest, ACheckerJudgesAProcessOnceAndAReusedPidAgain) {
  Process({.pid = 77, .comm = "irqbalance"});
  DaemonChecker checker(proc(), "irqbalance");
  EXPECT_TRUE(checker.IsDaemon(77));
  tree_.Remove("proc/77/status");
  tree_.Remove("proc/77/exe");
  EXPECT_FALSE(IsDaemon(proc(), 77, "irqbalance")) << "read afresh";
  EXPECT_TRUE(checker.IsDaemon(77)) << "neither read again";

  Process({.pid = 77,
           .comm = "irqbalance",
           .uid = 65534,
           .euid = 65534,
           .start_time = 9000000});
  Identity identity = checker.Identify(77);
  EXPECT_TRUE(identity.named);
  EXPECT_FALSE(identity.genuine);
  EXPECT_THAT(identity.refused, HasSubstr("(pid 77, uid 65534) is not root's"));

  // A status that cannot be read settles nothing.
  Process({.pid = 77, .comm = "irqbalance", .start_time = 9500000});
  tree_.Remove("proc/77/status");
  EXPECT_FALSE(checker.IsDaemon(77));
  Process({.pid = 77, .comm = "irqbalance", .start_time = 9500000});
  EXPECT_TRUE(checker.IsDaemon(77)) << "root's, once its status is read";
  // Its stat is read each time: renamed or a zombie, it is not the daemon.
  tree_.Write("proc/77/stat", FixtureStatLine(77, "irqb", 'S', 9500000));
  EXPECT_FALSE(checker.Identify(77).named);
  tree_.Write("proc/77/stat", FixtureStatLine(77, "irqbalance", 'Z', 9500000));
  EXPECT_FALSE(checker.IsDaemon(77));
}

// tuned is only watched, never spoken to: found by its name.
TEST_F(ProcessFinderTest, ByNameAloneForWhatIsOnlyWatched) {
  Process({.pid = 40, .comm = "tuned"});
  Process({.pid = 41, .comm = "tuned", .uid = 1000, .euid = 1000});
  auto named = FindProcessesNamed(proc(), "tuned");
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_THAT(*named, ElementsAre(40, 41));
  EXPECT_FALSE(FindDaemons(tree_.root() + "/nothing", "irqbalance").ok());
}

}  // namespace
}  // namespace locus
