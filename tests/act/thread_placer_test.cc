#include "agent/act/thread_placer.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/fake_kernel_ops.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class ThreadPlacerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ops_.threads[11] = {100, {0, 1, 2, 3}, {0, 1, 2, 3}};
    ops_.threads[12] = {101, {0, 1, 2, 3}, {0, 1}};  // cpuset 0-1
    auto journal = Journal::Open(JournalOptions{tree_.root() + "/journal"});
    ASSERT_TRUE(journal.ok());
    journal_ = *std::move(journal);
  }
  PinThread Pin(int32_t tid, std::vector<int> cpus) {
    PinThread pin;
    pin.pid = 10;
    pin.tid = tid;
    pin.cpus = std::move(cpus);
    return pin;
  }
  TempTree tree_;
  FakeThreadOps ops_;
  std::unique_ptr<Journal> journal_;
};

TEST_F(ThreadPlacerTest, JournalsOriginalThenPins) {
  ThreadPlacer placer(&ops_, journal_.get(), false);
  ActionResult result = placer.Apply(Pin(11, {2, 3}));
  EXPECT_EQ(result.outcome, Outcome::kApplied) << result.message;
  EXPECT_THAT(ops_.threads[11].affinity, ElementsAre(2, 3));
  ASSERT_TRUE(journal_->HasThread(11));
  EXPECT_THAT(journal_->contents().threads.at(11).cpus,
              ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(journal_->contents().threads.at(11).start_time, 100u);
  EXPECT_THAT(result.message, HasSubstr("0-3 -> 2-3"));
  // Moving again keeps the first original.
  EXPECT_EQ(placer.Apply(Pin(11, {1})).outcome, Outcome::kApplied);
  EXPECT_THAT(journal_->contents().threads.at(11).cpus,
              ElementsAre(0, 1, 2, 3));
  // And asking for what is already there changes nothing.
  EXPECT_EQ(placer.Apply(Pin(11, {1})).outcome, Outcome::kUnchanged);
}

TEST_F(ThreadPlacerTest, IntersectsWithCpuset) {
  ThreadPlacer placer(&ops_, journal_.get(), false);
  ActionResult result = placer.Apply(Pin(12, {1, 2, 3}));
  EXPECT_EQ(result.outcome, Outcome::kApplied) << result.message;
  EXPECT_THAT(ops_.threads[12].affinity, ElementsAre(1));
  EXPECT_THAT(result.message, HasSubstr("cpuset-limited"));
}

TEST_F(ThreadPlacerTest, CpusetForbidsEverything) {
  ThreadPlacer placer(&ops_, journal_.get(), false);
  ActionResult result = placer.Apply(Pin(12, {2, 3}));
  EXPECT_EQ(result.outcome, Outcome::kForbidden);
  EXPECT_EQ(ops_.set_calls, 0);
  EXPECT_FALSE(journal_->HasThread(12));
}

TEST_F(ThreadPlacerTest, GoneThreadIsAnOutcome) {
  ThreadPlacer placer(&ops_, journal_.get(), false);
  EXPECT_EQ(placer.Apply(Pin(99, {0})).outcome, Outcome::kGone);
}

TEST_F(ThreadPlacerTest, KernelEinvalIsForbiddenAndNotJournaled) {
  ops_.set_error = EINVAL;
  ThreadPlacer placer(&ops_, journal_.get(), false);
  EXPECT_EQ(placer.Apply(Pin(11, {0})).outcome, Outcome::kForbidden);
  EXPECT_FALSE(journal_->HasThread(11));
  ops_.set_error = EPERM;
  EXPECT_EQ(placer.Apply(Pin(11, {0})).outcome, Outcome::kForbidden);
}

TEST_F(ThreadPlacerTest, DryRunChangesNothing) {
  ThreadPlacer placer(&ops_, journal_.get(), true);
  ActionResult result = placer.Apply(Pin(11, {0}));
  EXPECT_EQ(result.outcome, Outcome::kDryRun);
  EXPECT_THAT(result.message, HasSubstr("would pin thread 11"));
  EXPECT_EQ(ops_.set_calls, 0);
  EXPECT_FALSE(journal_->HasThread(11));
}

TEST_F(ThreadPlacerTest, RefusesWhenJournalUnwritable) {
  tree_.Write("ro", "x");
  auto journal = Journal::Open(JournalOptions{tree_.root() + "/ro/journal"});
  ASSERT_TRUE(journal.ok());
  ThreadPlacer placer(&ops_, journal->get(), false);
  ActionResult result = placer.Apply(Pin(11, {0}));
  EXPECT_EQ(result.outcome, Outcome::kRefused);
  EXPECT_THAT(result.message, HasSubstr("not acting"));
  EXPECT_EQ(ops_.set_calls, 0);
  EXPECT_THAT(ops_.threads[11].affinity, ElementsAre(0, 1, 2, 3));
}

TEST_F(ThreadPlacerTest, BacksOffAfterExternalChange) {
  ThreadPlacer placer(&ops_, journal_.get(), false);
  ASSERT_EQ(placer.Apply(Pin(11, {2})).outcome, Outcome::kApplied);
  EXPECT_THAT(placer.CheckExternalChanges(), IsEmpty());
  ops_.threads[11].affinity = {3};  // taskset by an operator
  std::vector<ExternalChange> changes = placer.CheckExternalChanges();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].id, 11);
  EXPECT_THAT(changes[0].expected, ElementsAre(2));
  EXPECT_THAT(changes[0].actual, ElementsAre(3));
  EXPECT_FALSE(journal_->HasThread(11));
  EXPECT_TRUE(placer.BackedOff(11));
  int calls = ops_.set_calls;
  EXPECT_EQ(placer.Apply(Pin(11, {2})).outcome, Outcome::kBackedOff);
  EXPECT_EQ(ops_.set_calls, calls);
  EXPECT_THAT(ops_.threads[11].affinity, ElementsAre(3));
  // Reported once only.
  EXPECT_THAT(placer.CheckExternalChanges(), IsEmpty());
}

TEST_F(ThreadPlacerTest, GoneOrRecycledThreadsAreDroppedQuietly) {
  ThreadPlacer placer(&ops_, journal_.get(), false);
  ASSERT_EQ(placer.Apply(Pin(11, {2})).outcome, Outcome::kApplied);
  ASSERT_EQ(placer.Apply(Pin(12, {0})).outcome, Outcome::kApplied);
  ops_.threads.erase(11);
  ops_.threads[12].start_time = 999;   // TID reused by a new thread...
  ops_.threads[12].affinity = {0, 1};  // ...with CPUs of its own
  EXPECT_THAT(placer.CheckExternalChanges(), IsEmpty());
  EXPECT_FALSE(journal_->HasThread(11));
  EXPECT_FALSE(journal_->HasThread(12));
}

// With many threads pinned each call checks a turn of them, and every one
// is checked within five calls.
TEST_F(ThreadPlacerTest, ChecksATurnOfTheThreadsEachCall) {
  ThreadPlacer placer(&ops_, journal_.get(), false);
  for (int32_t tid = 1000; tid < 2000; ++tid) {
    ops_.threads[tid] = {1, {0, 1, 2, 3}, {0, 1, 2, 3}};
    ASSERT_EQ(placer.Apply(Pin(tid, {1})).outcome, Outcome::kApplied);
  }
  int before = ops_.get_calls;
  EXPECT_THAT(placer.CheckExternalChanges(), IsEmpty());
  EXPECT_EQ(ops_.get_calls - before, 200);
  ops_.threads[1000].affinity = {3};  // just checked: next turn is 4 away
  size_t reported = 0;
  for (int call = 0; call < 5; ++call) {
    reported += placer.CheckExternalChanges().size();
  }
  EXPECT_EQ(reported, 1u);
  EXPECT_TRUE(placer.BackedOff(1000));
}

// A pin asked again over a change the turns have not reached yet backs off
// rather than overwrite it, and the change is reported like any other.
TEST_F(ThreadPlacerTest, APinOverAnUncheckedChangeBacksOff) {
  ThreadPlacer placer(&ops_, journal_.get(), false);
  ASSERT_EQ(placer.Apply(Pin(11, {2})).outcome, Outcome::kApplied);
  ops_.threads[11].affinity = {3};  // taskset by an operator
  int calls = ops_.set_calls;
  ActionResult again = placer.Apply(Pin(11, {2}));
  EXPECT_EQ(again.outcome, Outcome::kBackedOff);
  EXPECT_THAT(again.message, HasSubstr("someone else"));
  EXPECT_EQ(ops_.set_calls, calls);
  EXPECT_THAT(ops_.threads[11].affinity, ElementsAre(3));
  EXPECT_FALSE(journal_->HasThread(11));
  std::vector<ExternalChange> changes = placer.CheckExternalChanges();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].id, 11);
  EXPECT_THAT(placer.CheckExternalChanges(), IsEmpty());
}

// A new thread on a recycled TID that has Locus's CPUs (inherited from a
// pinned parent) is told by its start time, read every few checks.
TEST_F(ThreadPlacerTest, RecycledThreadWithLocusCpusIsDroppedWithinTenChecks) {
  ThreadPlacer placer(&ops_, journal_.get(), false);
  ASSERT_EQ(placer.Apply(Pin(11, {2})).outcome, Outcome::kApplied);
  ops_.threads[11].start_time = 999;
  for (int i = 0; i < 10 && journal_->HasThread(11); ++i) {
    EXPECT_THAT(placer.CheckExternalChanges(), IsEmpty());
  }
  EXPECT_FALSE(journal_->HasThread(11));
}

}  // namespace
}  // namespace locus
