// Debian's own irqbalance (1.9.2), started by the test: what its control
// socket really says to "setup", that Locus's bans land in its list beside
// its --banirq ones and leave with Locus, that a restarted irqbalance is
// banned again, and that nothing Locus sends stops it. Needs root (the
// socket is root's) and /usr/sbin/irqbalance (deploy/deps.sh installs it).
// irqbalance moves this machine's IRQs while it runs: their affinities are
// put back after each test.
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "agent/act/neighbours/irqbalance_bans.h"
#include "agent/act/neighbours/irqbalance_protocol.h"
#include "agent/act/neighbours/irqbalance_socket.h"
#include "agent/act/neighbours/neighbours.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/neighbours/look_alike.h"
#include "tests/common/process_util.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kIrqbalance[] = "/usr/sbin/irqbalance";
constexpr char kRunDir[] = "/run/irqbalance";
// A ban of the admin's own, given on irqbalance's command line: an IRQ
// number no device has, so the test moves nothing through it.
constexpr int kAdminBan = 1999;
// Its sleep interval (--interval): a rescan holds its loop this long.
constexpr int kInterval = 1;

bool Alive(pid_t pid) {
  return access(absl::StrCat("/proc/", pid).c_str(), F_OK) == 0;
}

// Whether `pid`'s main thread sleeps in nanosleep: irqbalance 1.9.2 does
// only in a rescan, where it holds its loop for its interval (its loop
// waits in poll otherwise).
bool Sleeping(pid_t pid) {
  int number = -1;
  const std::string syscall = ReadAll(absl::StrCat("/proc/", pid, "/syscall"));
  if (!absl::SimpleAtoi(syscall.substr(0, syscall.find(' ')), &number)) {
    return false;
  }
#ifdef SYS_nanosleep
  if (number == SYS_nanosleep) return true;
#endif
  return number == SYS_clock_nanosleep;
}

// Every IRQ's affinity, to put back what irqbalance moved.
std::map<std::string, std::string> SaveAffinities() {
  std::map<std::string, std::string> saved;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/irq")) {
    const std::string path = entry.path().string() + "/smp_affinity_list";
    const std::string text = ReadAll(path);
    if (!text.empty()) saved[path] = text;
  }
  return saved;
}

void PutBack(const std::map<std::string, std::string>& saved) {
  for (const auto& [path, text] : saved) {
    FILE* f = fopen(path.c_str(), "w");
    if (f == nullptr) continue;
    fputs(text.c_str(), f);
    fclose(f);  // an IRQ whose affinity cannot be set refuses: fine
  }
}

class IrqbalancePrivilegedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "irqbalance's socket is root's";
    if (access(kIrqbalance, X_OK) != 0) {
      GTEST_SKIP() << kIrqbalance << " is missing: deploy/deps.sh installs it";
    }
    auto running = MakeIrqbalanceSocketOps()->Find();
    if (!running.ok() || running->has_value()) {
      GTEST_SKIP() << "an irqbalance already runs; this test starts its own";
    }
    saved_ = SaveAffinities();
    struct stat st;
    if (stat(kRunDir, &st) != 0) {
      ASSERT_EQ(mkdir(kRunDir, 0755), 0);
      made_dir_ = true;
    }
    // One IRQ of this machine for Locus to take (any but the first: it is
    // often the timer's, which irqbalance leaves alone anyway).
    for (const auto& [path, text] : saved_) {
      int irq = 0;
      const std::string dir = std::filesystem::path(path).parent_path();
      if (absl::SimpleAtoi(std::filesystem::path(dir).filename().string(),
                           &irq) &&
          irq > 1 && irq != kAdminBan) {
        irq_ = irq;
      }
    }
    ASSERT_GT(irq_, 0) << "no IRQ in /proc/irq";
    StartIrqbalance();
  }

  void TearDown() override {
    if (pid_ > 0) Stop(pid_, SIGTERM);
    PutBack(saved_);
    if (made_dir_) std::filesystem::remove_all(kRunDir);
  }

  // In the foreground with an `interval` s interval: it answers between
  // scans, and holds its loop for the interval after each change of its list.
  void StartIrqbalance(int interval = kInterval) {
    pid_ = Spawn(
        {kIrqbalance, "--foreground", absl::StrCat("--interval=", interval),
         absl::StrCat("--banirq=", kAdminBan)},
        tree_.root() + "/irqbalance.log");
    ASSERT_GT(pid_, 0);
    const std::string socket =
        absl::StrCat(kRunDir, "/irqbalance", pid_, ".sock");
    ASSERT_TRUE(WaitUntil([&] { return access(socket.c_str(), F_OK) == 0; },
                          absl::Seconds(20)))
        << ReadAll(tree_.root() + "/irqbalance.log");
  }

  // Its banned list, as "setup" tells it.
  std::set<int> Listed() {
    auto found = ops_->Find();
    EXPECT_TRUE(found.ok() && found->has_value()) << found.status();
    if (!found.ok() || !found->has_value()) return {};
    auto reply =
        IrqbalanceRequestBlocking(*ops_, **found, "setup", absl::Seconds(15));
    EXPECT_TRUE(reply.ok()) << reply.status();
    if (!reply.ok()) return {};
    auto setup = ParseIrqbalanceSetup(*reply);
    EXPECT_TRUE(setup.ok()) << setup.status();
    return setup.ok() ? setup->banned_irqs : std::set<int>();
  }

  // Ticks once a second until `done` or 60 s.
  bool TickUntil(IrqbalanceBans& bans, const std::set<int>& wanted,
                 const std::function<bool()>& done) {
    return WaitUntil(
        [&] {
          bans.Tick(wanted, absl::Now());
          return done();
        },
        absl::Seconds(60), absl::Milliseconds(200));
  }

  std::unique_ptr<Journal> OpenJournal() {
    auto journal = Journal::Open({tree_.root() + "/journal"});
    EXPECT_TRUE(journal.ok()) << journal.status();
    return journal.ok() ? *std::move(journal) : nullptr;
  }

  TempTree tree_;
  std::map<std::string, std::string> saved_;
  bool made_dir_ = false;
  pid_t pid_ = 0;
  int irq_ = 0;
  std::unique_ptr<IrqbalanceOps> ops_ = MakeIrqbalanceSocketOps();
};

TEST_F(IrqbalancePrivilegedTest, SetupListsItsOwnBans) {
  EXPECT_THAT(Listed(), ElementsAre(kAdminBan));
}

TEST_F(IrqbalancePrivilegedTest, BansBesideTheAdminsAndGivesBackOnlyLocuss) {
  std::unique_ptr<Journal> journal = OpenJournal();
  ASSERT_NE(journal, nullptr);
  IrqbalanceBans bans(*ops_, *journal);
  ASSERT_TRUE(TickUntil(bans, {irq_}, [&] { return bans.Banned(irq_); }))
      << bans.state().problem;
  EXPECT_EQ(Listed(), (std::set<int>{irq_, kAdminBan}));
  EXPECT_EQ(journal->contents().irqbalance_bans.at(irq_), pid_);
  EXPECT_THAT(bans.state().banned_by_others, ElementsAre(kAdminBan));

  ASSERT_TRUE(TickUntil(bans, {}, [&] {
    return journal->contents().irqbalance_bans.empty();
  })) << bans.state().problem;
  EXPECT_THAT(Listed(), ElementsAre(kAdminBan));
  EXPECT_TRUE(Alive(pid_));
}

TEST_F(IrqbalancePrivilegedTest, ARestartedIrqbalanceIsBannedAgain) {
  std::unique_ptr<Journal> journal = OpenJournal();
  ASSERT_NE(journal, nullptr);
  IrqbalanceBans bans(*ops_, *journal);
  ASSERT_TRUE(TickUntil(bans, {irq_}, [&] { return bans.Banned(irq_); }));
  Stop(pid_, SIGTERM);
  StartIrqbalance();
  ASSERT_TRUE(TickUntil(bans, {irq_}, [&] {
    return bans.state().restarts == 1 && bans.Banned(irq_);
  })) << bans.state().problem;
  EXPECT_EQ(Listed(), (std::set<int>{irq_, kAdminBan}));
  EXPECT_EQ(journal->contents().irqbalance_bans.at(irq_), pid_)
      << "journaled under the new irqbalance";
}

TEST_F(IrqbalancePrivilegedTest, RestoreTakesOffOnlyWhatTheJournalSays) {
  std::unique_ptr<Journal> journal = OpenJournal();
  ASSERT_NE(journal, nullptr);
  {
    IrqbalanceBans bans(*ops_, *journal);
    ASSERT_TRUE(TickUntil(bans, {irq_}, [&] { return bans.Banned(irq_); }));
  }  // Locus stops here without giving back: a crash
  std::vector<std::string> messages, errors;
  std::map<int, int32_t> kept;
  RestoreIrqbalanceBans(journal->contents().irqbalance_bans, *ops_,
                        absl::Seconds(15), &messages, &errors, &kept);
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_THAT(kept, IsEmpty());
  EXPECT_THAT(Listed(), ElementsAre(kAdminBan));
}

// Issue #39: started from a shell (SIGPIPE not ignored) with a ban set at
// run time through its socket, irqbalance outlives Locus's clean exit (the
// in-flight request finished, the journal's bans given back), and keeps the
// hand ban through the rescans the exchange started.
TEST_F(IrqbalancePrivilegedTest, ARuntimeBanAndItsDaemonOutliveLocussExit) {
  constexpr int kHandBan = 1998;
  auto found = ops_->Find();
  ASSERT_TRUE(found.ok() && found->has_value()) << found.status();
  ASSERT_TRUE(IrqbalanceRequestBlocking(*ops_, **found,
                                        *FormatBanIrqs({kHandBan, kAdminBan}),
                                        absl::Seconds(15))
                  .ok());
  std::unique_ptr<Journal> journal = OpenJournal();
  ASSERT_NE(journal, nullptr);
  {
    IrqbalanceBans bans(*ops_, *journal);
    ASSERT_TRUE(TickUntil(bans, {irq_}, [&] { return bans.Banned(irq_); }))
        << bans.state().problem;
    EXPECT_EQ(Listed(), (std::set<int>{irq_, kHandBan, kAdminBan}));
    // As the executor's RestoreAll: the loop's request, then the journal.
    bans.Tick({irq_}, absl::Now());
    bans.Finish(absl::Seconds(25));
  }
  std::vector<std::string> messages, errors;
  std::map<int, int32_t> kept;
  RestoreIrqbalanceBans(journal->contents().irqbalance_bans, *ops_,
                        absl::Seconds(25), &messages, &errors, &kept);
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_THAT(kept, IsEmpty());
  // Past the rescan the give-back started, and the scan after it.
  absl::SleepFor(absl::Seconds(3 * kInterval + 1));
  ASSERT_TRUE(Alive(pid_)) << ReadAll(tree_.root() + "/irqbalance.log");
  EXPECT_EQ(Listed(), (std::set<int>{kHandBan, kAdminBan}));
}

// Issue #39 item 2: an irqbalance that does not answer (stopped) keeps
// Locus's ban in the report's kept records, and a later restore gives it
// back once it answers. Started as systemd starts it (SIGPIPE ignored): the
// request dropped at the timeout is answered into a closed socket.
TEST_F(IrqbalancePrivilegedTest, AHungIrqbalancesBanIsKeptUntilItAnswers) {
  Stop(pid_, SIGTERM);
  signal(SIGPIPE, SIG_IGN);  // inherited through exec
  StartIrqbalance();
  signal(SIGPIPE, SIG_DFL);
  std::unique_ptr<Journal> journal = OpenJournal();
  ASSERT_NE(journal, nullptr);
  {
    IrqbalanceBans bans(*ops_, *journal);
    ASSERT_TRUE(TickUntil(bans, {irq_}, [&] { return bans.Banned(irq_); }));
  }  // a crash
  ASSERT_EQ(kill(pid_, SIGSTOP), 0);
  std::vector<std::string> messages, errors;
  std::map<int, int32_t> kept;
  RestoreIrqbalanceBans(journal->contents().irqbalance_bans, *ops_,
                        absl::Seconds(2), &messages, &errors, &kept);
  EXPECT_THAT(errors, ElementsAre(HasSubstr("did not answer")));
  EXPECT_EQ(kept, (std::map<int, int32_t>{{irq_, pid_}}));
  ASSERT_EQ(kill(pid_, SIGCONT), 0);
  errors.clear();
  std::map<int, int32_t> again;
  RestoreIrqbalanceBans(kept, *ops_, absl::Seconds(15), &messages, &errors,
                        &again);
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_THAT(again, IsEmpty());
  EXPECT_THAT(Listed(), ElementsAre(kAdminBan));
  EXPECT_TRUE(Alive(pid_));
}

// Issue #39 item 1: a user's process named irqbalance beside the real one
// is neither counted nor spoken to: Locus's ban reaches the real one, and
// after a crash (Locus gone without giving back) a restore, by a new
// process as `locusd --restore` is, gives its list back exactly.
TEST_F(IrqbalancePrivilegedTest, AUsersLookAlikeChangesNothing) {
  LookAlike look_alike("irqbalance");
  ASSERT_GT(look_alike.pid(), 0) << "setpriv could not start it as nobody";
  const std::string refused = absl::StrCat("a process named irqbalance (pid ",
                                           look_alike.pid(), ", uid 65534)");
  std::unique_ptr<Journal> journal = OpenJournal();
  ASSERT_NE(journal, nullptr);
  {
    IrqbalanceBans bans(*ops_, *journal);
    ASSERT_TRUE(TickUntil(bans, {irq_}, [&] { return bans.Banned(irq_); }))
        << bans.state().problem;
    EXPECT_EQ(bans.state().pid, pid_);
    EXPECT_THAT(bans.state().look_alikes, ElementsAre(HasSubstr(refused)));
    EXPECT_EQ(Listed(), (std::set<int>{irq_, kAdminBan}));
  }  // a crash: nothing given back
  EXPECT_EQ(journal->contents().irqbalance_bans.at(irq_), pid_);
  std::unique_ptr<IrqbalanceOps> restore = MakeIrqbalanceSocketOps();
  std::vector<std::string> messages, errors;
  std::map<int, int32_t> kept;
  RestoreIrqbalanceBans(journal->contents().irqbalance_bans, *restore,
                        absl::Seconds(15), &messages, &errors, &kept);
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_THAT(kept, IsEmpty());
  EXPECT_THAT(messages, Contains(HasSubstr(refused)));
  EXPECT_THAT(messages, Contains(HasSubstr("given back to irqbalance (pid")));
  EXPECT_THAT(Listed(), ElementsAre(kAdminBan));
  EXPECT_TRUE(Alive(look_alike.pid())) << "nothing was sent to it";
}

// Issue #39: with `--interval=40` (legal, and long), the rescan that follows
// Locus's ban holds irqbalance's loop for 40 s. `locusd --restore` started
// inside it (after a crash) waits the hold out instead of giving up at its
// fixed 25 s, and leaves the ban list exactly as it was before Locus. About
// 80 s: irqbalance's first scan comes an interval after its start, and its
// hold lasts another.
TEST_F(IrqbalancePrivilegedTest, ARestoreWaitsOutTheRescanOfALongInterval) {
  constexpr int kLongInterval = 40;
  if (ReadAll(absl::StrCat("/proc/", pid_, "/syscall")).empty()) {
    GTEST_SKIP() << "no /proc/PID/syscall: the rescan's sleep cannot be seen";
  }
  Stop(pid_, SIGTERM);
  signal(SIGPIPE, SIG_IGN);  // as systemd starts it; inherited through exec
  StartIrqbalance(kLongInterval);
  signal(SIGPIPE, SIG_DFL);
  const std::set<int> before = Listed();
  ASSERT_THAT(before, ElementsAre(kAdminBan));
  std::unique_ptr<Journal> journal = OpenJournal();
  ASSERT_NE(journal, nullptr);
  {
    IrqbalanceBans bans(*ops_, *journal);
    ASSERT_TRUE(TickUntil(bans, {irq_}, [&] {
      return journal->contents().irqbalance_bans.count(irq_) > 0;
    })) << bans.state().problem;
    bans.Finish(absl::Seconds(5));  // the send answered
  }                                 // a crash: nothing given back
  ASSERT_EQ(Listed(), (std::set<int>{irq_, kAdminBan}));
  // Its next scan rescans, and sleeps out the interval in the middle.
  ASSERT_TRUE(WaitUntil([&] { return Sleeping(pid_); },
                        absl::Seconds(kLongInterval + 5),
                        absl::Milliseconds(100)))
      << ReadAll(absl::StrCat("/proc/", pid_, "/syscall"));
  std::unique_ptr<IrqbalanceOps> restore = MakeIrqbalanceSocketOps();
  const absl::Duration timeout = NeighbourRestoreOps{}.timeout;
  std::vector<std::string> messages, errors;
  std::map<int, int32_t> kept;
  const absl::Time start = absl::Now();
  RestoreIrqbalanceBans(journal->contents().irqbalance_bans, *restore, timeout,
                        &messages, &errors, &kept);
  const absl::Duration took = absl::Now() - start;
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_THAT(kept, IsEmpty());
  EXPECT_THAT(messages, Contains(HasSubstr("given back to irqbalance (pid")));
  EXPECT_GT(took, timeout) << "the hold did not outlast the fixed timeout: "
                              "this test proved nothing";
  EXPECT_EQ(Listed(), before);
  EXPECT_TRUE(Alive(pid_)) << ReadAll(tree_.root() + "/irqbalance.log");
}

TEST_F(IrqbalancePrivilegedTest, TheLongestListAndAnEmptyOneLeaveItRunning) {
  std::set<int> many;
  for (int irq = 1000; FormatBanIrqs(many).ok(); ++irq) many.insert(irq);
  many.erase(std::prev(many.end()));  // the last one made it too long
  auto found = ops_->Find();
  ASSERT_TRUE(found.ok() && found->has_value());
  auto ban = FormatBanIrqs(many);
  ASSERT_TRUE(ban.ok()) << ban.status();
  ASSERT_TRUE(
      IrqbalanceRequestBlocking(*ops_, **found, *ban, absl::Seconds(15)).ok());
  EXPECT_EQ(Listed(), many);
  ASSERT_TRUE(IrqbalanceRequestBlocking(*ops_, **found, *FormatBanIrqs({}),
                                        absl::Seconds(15))
                  .ok());
  EXPECT_THAT(Listed(), IsEmpty());
  EXPECT_TRUE(Alive(pid_));
}

}  // namespace
}  // namespace locus
