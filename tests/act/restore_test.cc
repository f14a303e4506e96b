#include "agent/act/restore.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/time/clock.h"
#include "agent/act/actuators.h"
#include "agent/act/neighbours/neighbours.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/fake_kernel_ops.h"
#include "tests/act/neighbours/fake_irqbalance.h"
#include "tests/act/neighbours/fake_numad.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

class RestoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.path = tree_.root() + "/journal";
    threads_.threads[11] = {100, {2}, {0, 1, 2, 3}};
    threads_.threads[12] = {101, {3}, {0, 1, 2, 3}};
    threads_.threads[13] = {555, {3}, {0, 1, 2, 3}};  // recycled TID
    irqs_.affinity[38] = {1};
  }
  void WriteJournal() {
    auto journal = Journal::Open(options_);
    ASSERT_TRUE(journal.ok());
    ASSERT_TRUE((*journal)->RecordThread({10, 11, 100, {0, 1, 2, 3}}).ok());
    ASSERT_TRUE((*journal)->RecordThread({10, 12, 101, {0, 1}}).ok());
    ASSERT_TRUE((*journal)->RecordThread({10, 13, 102, {0}}).ok());
    ASSERT_TRUE((*journal)->RecordThread({10, 14, 103, {0}}).ok());  // exited
    ASSERT_TRUE((*journal)->RecordIrq({38, {0, 1}}).ok());
    ASSERT_TRUE((*journal)->RecordIrq({39, {0}}).ok());  // device removed
  }
  // And IRQ 38 banned in irqbalance 100, worker 10 excluded from numad 200.
  void WriteJournalWithNeighbours() {
    WriteJournal();
    auto journal = Journal::Open(options_);
    ASSERT_TRUE(journal.ok());
    ASSERT_TRUE((*journal)->RecordIrqbalanceBan(100, 38).ok());
    ASSERT_TRUE((*journal)->RecordNumadExclusion(200, 10).ok());
  }
  TempTree tree_;
  JournalOptions options_;
  FakeThreadOps threads_;
  FakeIrqOps irqs_;
};

TEST_F(RestoreTest, RestoresEverythingAndClears) {
  WriteJournal();
  auto report = RestoreJournal(options_, threads_, irqs_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->threads_restored, 2);
  EXPECT_EQ(report->irqs_restored, 1);
  EXPECT_EQ(report->dropped, 3);
  EXPECT_THAT(threads_.threads[11].affinity, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(threads_.threads[12].affinity, ElementsAre(0, 1));
  EXPECT_THAT(threads_.threads[13].affinity, ElementsAre(3));  // not ours
  EXPECT_THAT(irqs_.affinity[38], ElementsAre(0, 1));
  EXPECT_NE(access(options_.path.c_str(), F_OK), 0);
}

// After the IRQ's affinity is back, irqbalance gets the IRQ back (its own
// --banirq one stays), and numad the worker.
TEST_F(RestoreTest, HandsBackWhatIrqbalanceAndNumadWereGiven) {
  WriteJournalWithNeighbours();
  FakeIrqbalance irqbalance;
  irqbalance.list = {38, 40};
  FakeNumad numad;
  numad.excluded = {10};
  numad.alive = {10};
  NeighbourRestoreOps ops{&irqbalance, &numad, absl::Seconds(1)};
  auto report = RestoreJournal(options_, threads_, irqs_, nullptr, &ops);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << testing::PrintToString(report->errors);
  EXPECT_THAT(irqbalance.list, ElementsAre(40));
  EXPECT_THAT(numad.excluded, testing::IsEmpty());
  EXPECT_THAT(irqs_.affinity[38], ElementsAre(0, 1));
  EXPECT_NE(access(options_.path.c_str(), F_OK), 0);
}

// Issue #39: a ban irqbalance did not take back (it hangs) and an exclusion
// numad did not (its queue is full) stay in the journal, alone, with a
// "partial restore" line; a later restore, once they answer, gives them
// back and deletes the file.
TEST_F(RestoreTest, KeepsWhatANeighbourDidNotTakeBackForLater) {
  WriteJournalWithNeighbours();
  FakeIrqbalance irqbalance;
  irqbalance.list = {38, 40};
  irqbalance.hang = true;  // under systemd: it outlives the request dropped
  irqbalance.ignores_sigpipe = true;
  FakeNumad numad;
  numad.excluded = {10};
  numad.alive = {10};
  numad.send_error = absl::UnavailableError("queue is full");
  NeighbourRestoreOps ops{&irqbalance, &numad, absl::Milliseconds(100)};
  auto report = RestoreJournal(options_, threads_, irqs_, nullptr, &ops);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->ok());
  EXPECT_THAT(report->kept_bans, ElementsAre(Pair(38, 100)));
  EXPECT_THAT(report->kept_exclusions, ElementsAre(Pair(10, 200)));
  EXPECT_THAT(KeptRecordsLine(*report),
              HasSubstr("partial restore: 1 irqbalance ban(s) and 1 numad "
                        "exclusion(s) kept in " +
                        options_.path));
  EXPECT_THAT(irqs_.affinity[38], ElementsAre(0, 1));  // the rest is done
  {
    auto journal = Journal::Open(options_);
    ASSERT_TRUE(journal.ok());
    const JournalContents& kept = (*journal)->contents();
    EXPECT_THAT(kept.irqbalance_bans, ElementsAre(Pair(38, 100)));
    EXPECT_THAT(kept.numad_exclusions, ElementsAre(Pair(10, 200)));
    EXPECT_THAT(kept.threads, IsEmpty());
    EXPECT_THAT(kept.irqs, IsEmpty());
  }

  irqbalance.hang = false;
  numad.send_error = absl::OkStatus();
  report = RestoreJournal(options_, threads_, irqs_, nullptr, &ops);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << testing::PrintToString(report->errors);
  EXPECT_EQ(report->kept(), 0u);
  EXPECT_THAT(irqbalance.list, ElementsAre(40));
  EXPECT_THAT(numad.excluded, IsEmpty());
  EXPECT_NE(access(options_.path.c_str(), F_OK), 0);
}

// A torn tail and a record kept: nothing is appended after the tear (it
// would be glued to it); the file is set aside and the kept ban alone is in
// a new one.
TEST_F(RestoreTest, KeptRecordsOfATornJournalGoToANewOne) {
  WriteJournalWithNeighbours();
  std::filesystem::resize_file(options_.path,
                               std::filesystem::file_size(options_.path) - 3);
  FakeIrqbalance irqbalance;
  irqbalance.list = {38};
  irqbalance.hang = true;
  irqbalance.ignores_sigpipe = true;
  FakeNumad numad;
  NeighbourRestoreOps ops{&irqbalance, &numad, absl::Milliseconds(100)};
  auto report = RestoreJournal(options_, threads_, irqs_, nullptr, &ops);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->truncated_tail);  // the numad record was torn
  EXPECT_THAT(report->kept_bans, ElementsAre(Pair(38, 100)));
  EXPECT_THAT(report->kept_copy, HasSubstr(options_.path + ".bad."));
  auto journal = Journal::Open(options_);
  ASSERT_TRUE(journal.ok());
  const JournalContents& kept = (*journal)->contents();
  EXPECT_FALSE(kept.dropped_content());
  EXPECT_THAT(kept.irqbalance_bans, ElementsAre(Pair(38, 100)));
  EXPECT_THAT(kept.threads, IsEmpty());
  EXPECT_THAT(kept.irqs, IsEmpty());
}

TEST_F(RestoreTest, HalfWrittenJournalRestoresCompleteRecords) {
  WriteJournal();
  // Crash mid-append: the last record (irq 39) loses its end.
  std::filesystem::resize_file(options_.path,
                               std::filesystem::file_size(options_.path) - 3);
  auto report = RestoreJournal(options_, threads_, irqs_);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->truncated_tail);
  EXPECT_EQ(report->threads_restored, 2);
  EXPECT_EQ(report->irqs_restored, 1);
  EXPECT_THAT(irqs_.affinity[38], ElementsAre(0, 1));
  // The torn record is dropped, so the file is kept for recovery by hand.
  EXPECT_THAT(report->kept_copy, HasSubstr(options_.path + ".bad."));
}

TEST_F(RestoreTest, FallsBackToCpusetWhenOriginalNoLongerAllowed) {
  WriteJournal();
  threads_.threads[12].cpuset = {2, 3};  // original 0-1 now outside
  auto report = RestoreJournal(options_, threads_, irqs_);
  ASSERT_TRUE(report.ok());
  EXPECT_THAT(threads_.threads[12].affinity, ElementsAre(2, 3));
}

TEST_F(RestoreTest, PerEntryFailureIsReportedAndTheRestRestored) {
  WriteJournal();
  irqs_.write_error[38] = EPERM;
  auto report = RestoreJournal(options_, threads_, irqs_);
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->ok());
  ASSERT_EQ(report->errors.size(), 1u);
  EXPECT_THAT(report->errors[0], HasSubstr("irq 38"));
  EXPECT_EQ(report->threads_restored, 2);
}

TEST_F(RestoreTest, DamagedRecordsAreCountedAndTheJournalKept) {
  WriteJournal();
  std::ofstream(options_.path, std::ios::app) << "junk\nI 38 3 00000000\n";
  auto report = RestoreJournal(options_, threads_, irqs_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->corrupt_records, 2);
  EXPECT_EQ(report->threads_restored, 2);
  EXPECT_THAT(irqs_.affinity[38], ElementsAre(0, 1));
  EXPECT_EQ(report->journal, options_.path);
  EXPECT_THAT(report->kept_copy, HasSubstr(options_.path + ".bad."));
  EXPECT_EQ(access(report->kept_copy.c_str(), F_OK), 0);
  EXPECT_NE(access(options_.path.c_str(), F_OK), 0);
}

TEST_F(RestoreTest, NoJournalIsNothingToDo) {
  auto report = RestoreJournal(options_, threads_, irqs_);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->threads_restored + report->irqs_restored, 0);
}

// Actuators over fake kernel ops: threads 5 and 6 and IRQ 30, all on CPUs
// 0-1 to begin with.
class ActuatorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ActuatorOptions options;
    options.journal.path = tree_.root() + "/journal";
    auto threads = std::make_unique<FakeThreadOps>();
    auto irqs = std::make_unique<FakeIrqOps>();
    threads->threads[5] = {1, {0, 1}, {0, 1}};
    threads->threads[6] = {2, {0, 1}, {0, 1}};
    irqs->affinity[30] = {0, 1};
    t = threads.get();
    i = irqs.get();
    KernelOps ops;
    ops.threads = std::move(threads);
    ops.irqs = std::move(irqs);
    ops.pages = std::make_unique<FakePageOps>();
    ops.clock = std::make_unique<FakeClock>();
    auto created = Actuators::Create(options, std::move(ops));
    ASSERT_TRUE(created.ok()) << created.status();
    actuators = *std::move(created);
  }

  TempTree tree_;
  FakeThreadOps* t = nullptr;
  FakeIrqOps* i = nullptr;
  std::unique_ptr<Actuators> actuators;
};

// The whole path: act, then the exit restore.
TEST_F(ActuatorsTest, ApplyThenRestoreAll) {
  Action pin{PinThread{5, 5, 0, {1}}, "test", 0};
  Action irq{SetIrqAffinity{30, {1}}, "test", 0};
  Action pages{MigratePages{99, -1, 0, 0}, "test", 0};
  EXPECT_EQ(actuators->Apply(pin).outcome, Outcome::kApplied);
  EXPECT_EQ(actuators->Apply(irq).outcome, Outcome::kApplied);
  // The page mover takes the move on its own thread; a later Apply of the
  // same move says what it found: the process is gone.
  EXPECT_EQ(actuators->Apply(pages).outcome, Outcome::kApplied);
  Outcome later = Outcome::kApplied;
  for (int i = 0; i < 200 && later != Outcome::kGone; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
    later = actuators->Apply(pages).outcome;
  }
  EXPECT_EQ(later, Outcome::kGone);
  EXPECT_THAT(t->threads[5].affinity, ElementsAre(1));
  EXPECT_TRUE(actuators->CheckExternalChanges().empty());
  auto report = actuators->RestoreAll();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->threads_restored, 1);
  EXPECT_EQ(report->irqs_restored, 1);
  EXPECT_THAT(t->threads[5].affinity, ElementsAre(0, 1));
  EXPECT_THAT(i->affinity[30], ElementsAre(0, 1));
  EXPECT_FALSE(actuators->journal().HasThread(5));
  // After the restore nothing is tracked: no spurious external changes.
  EXPECT_TRUE(actuators->CheckExternalChanges().empty());
}

// A dry run only looks: the page mover gets nothing and no page moves (what
// an enforcing tick queued is stopped by the loop: Executor::StopPageMoves).
TEST_F(ActuatorsTest, DryRunMovesNoPage) {
  ActuatorOptions options;
  options.journal.path = tree_.root() + "/dry-journal";
  auto pages = std::make_unique<FakePageOps>();
  FakePageOps* fake = pages.get();
  fake->processes[1].ranges = {{0x10000, 0x12000}};
  fake->processes[1].page_node[0x10000] = 1;
  fake->processes[1].page_node[0x11000] = 1;
  KernelOps ops;
  ops.threads = std::make_unique<FakeThreadOps>();
  ops.irqs = std::make_unique<FakeIrqOps>();
  ops.pages = std::move(pages);
  ops.clock = std::make_unique<FakeClock>();
  auto created = Actuators::Create(options, std::move(ops));
  ASSERT_TRUE(created.ok()) << created.status();
  const Action move{MigratePages{1, -1, 0, 0}, "test", 0};
  ActionResult dry = (*created)->Apply(move, true);
  EXPECT_EQ(dry.outcome, Outcome::kDryRun);
  EXPECT_THAT(dry.message, HasSubstr("would move 2 of 2 pages"));
  absl::SleepFor(absl::Milliseconds(50));  // a mover thread would have run
  EXPECT_EQ(fake->move_calls, 0);
  EXPECT_EQ(fake->processes[1].page_node[0x10000], 1);
}

// A journal that cannot be written stops every change, page moves too, and
// says why until a record is written again.
TEST_F(ActuatorsTest, UnwritableJournalRefusesEveryKindOfChange) {
  ActuatorOptions options;
  // Its directory is a file: nothing can be created there.
  std::ofstream(tree_.root() + "/blocked") << "x";
  options.journal.path = tree_.root() + "/blocked/journal";
  auto threads = std::make_unique<FakeThreadOps>();
  threads->threads[5] = {1, {0, 1}, {0, 1}};
  FakeThreadOps* fake = threads.get();
  auto pages = std::make_unique<FakePageOps>();
  FakePageOps* fake_pages = pages.get();
  pages->processes[1].ranges = {{0x10000, 0x11000}};
  pages->processes[1].page_node[0x10000] = 1;
  KernelOps ops;
  ops.threads = std::move(threads);
  ops.irqs = std::make_unique<FakeIrqOps>();
  ops.pages = std::move(pages);
  ops.clock = std::make_unique<FakeClock>();
  auto created = Actuators::Create(options, std::move(ops));
  ASSERT_TRUE(created.ok()) << created.status();
  Actuators& blocked = **created;
  EXPECT_TRUE(blocked.journal().last_error().ok()) << "nothing tried yet";

  ActionResult pin = blocked.Apply({PinThread{1, 5, 0, {1}}, "test", 0});
  EXPECT_EQ(pin.outcome, Outcome::kRefused);
  EXPECT_THAT(pin.message, HasSubstr("not acting"));
  EXPECT_THAT(fake->threads[5].affinity, ElementsAre(0, 1));
  EXPECT_FALSE(blocked.journal().last_error().ok());
  ActionResult move = blocked.Apply({MigratePages{1, -1, 0, 0}, "test", 0});
  EXPECT_EQ(move.outcome, Outcome::kRefused);
  EXPECT_THAT(move.message, HasSubstr("not a directory"));
  EXPECT_EQ(fake_pages->query_calls + fake_pages->move_calls, 0);
  // A dry run changes nothing, so it is still answered.
  EXPECT_NE(blocked.Apply({MigratePages{1, -1, 0, 0}, "test", 0}, true).outcome,
            Outcome::kRefused);

  // Writable again: the next change is journaled and made.
  std::filesystem::remove(tree_.root() + "/blocked");
  EXPECT_EQ(blocked.Apply({PinThread{1, 5, 0, {1}}, "test", 0}).outcome,
            Outcome::kApplied);
  EXPECT_TRUE(blocked.journal().last_error().ok());
  EXPECT_THAT(fake->threads[5].affinity, ElementsAre(1));
}

TEST_F(ActuatorsTest, RevertOneActionAndPerCallDryRun) {
  Action pin5{PinThread{4, 5, 0, {1}}, "test", 0};
  Action pin6{PinThread{4, 6, 0, {0}}, "test", 0};
  Action irq{SetIrqAffinity{30, {1}}, "test", 0};
  EXPECT_EQ(actuators->Apply(pin5, /*dry_run=*/true).outcome, Outcome::kDryRun);
  EXPECT_THAT(t->threads[5].affinity, ElementsAre(0, 1));
  ASSERT_EQ(actuators->Apply(pin5).outcome, Outcome::kApplied);
  ASSERT_EQ(actuators->Apply(pin6).outcome, Outcome::kApplied);
  ASSERT_EQ(actuators->Apply(irq).outcome, Outcome::kApplied);

  ASSERT_TRUE(actuators->Revert(pin5).ok());
  EXPECT_THAT(t->threads[5].affinity, ElementsAre(0, 1));
  EXPECT_THAT(t->threads[6].affinity, ElementsAre(0));  // untouched
  EXPECT_FALSE(actuators->journal().HasThread(5));
  EXPECT_TRUE(actuators->journal().HasThread(6));
  ASSERT_TRUE(actuators->Revert(irq).ok());
  EXPECT_THAT(i->affinity[30], ElementsAre(0, 1));
  EXPECT_FALSE(actuators->journal().HasIrq(30));
  // Reverting again, or a thread that is gone, is not an error.
  EXPECT_TRUE(actuators->Revert(pin5).ok());
  t->threads.erase(6);
  EXPECT_TRUE(actuators->Revert(pin6).ok());
  EXPECT_FALSE(actuators->journal().HasThread(6));
  // A migration's revert cancels its queued moves (pages moved stay).
  Action pages{MigratePages{4, -1, 0, 0}, "test", 0};
  EXPECT_TRUE(actuators->Revert(pages).ok());
  // The external-change report carries the thread's process.
  ASSERT_EQ(actuators->Apply(pin5).outcome, Outcome::kApplied);
  t->threads[5].affinity = {0};
  auto changes = actuators->CheckExternalChanges();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].pid, 4);
  EXPECT_EQ(changes[0].id, 5);
}

}  // namespace
}  // namespace locus
