#include "agent/act/irq_setter.h"

#include <cerrno>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/fake_kernel_ops.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class IrqSetterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ops_.affinity[38] = {0, 1};
    ops_.affinity[39] = {0, 1};
    ops_.affinity[40] = {0, 1};
    ops_.write_error[39] = EIO;    // kernel-managed, up to 6.x
    ops_.write_error[40] = EPERM;  // kernel-managed, 6.18
    auto journal = Journal::Open(JournalOptions{tree_.root() + "/journal"});
    ASSERT_TRUE(journal.ok());
    journal_ = *std::move(journal);
  }
  TempTree tree_;
  FakeIrqOps ops_;
  std::unique_ptr<Journal> journal_;
};

TEST_F(IrqSetterTest, JournalsThenWrites) {
  IrqSetter setter(&ops_, journal_.get(), false);
  ActionResult result = setter.Apply({38, {1}});
  EXPECT_EQ(result.outcome, Outcome::kApplied) << result.message;
  EXPECT_THAT(ops_.affinity[38], ElementsAre(1));
  EXPECT_THAT(result.cpus_before, ElementsAre(0, 1));
  ASSERT_TRUE(journal_->HasIrq(38));
  EXPECT_THAT(journal_->contents().irqs.at(38).cpus, ElementsAre(0, 1));
  EXPECT_EQ(setter.Apply({38, {1}}).outcome, Outcome::kUnchanged);
}

TEST_F(IrqSetterTest, EioMarksUnmanageable) {
  IrqSetter setter(&ops_, journal_.get(), false);
  ActionResult result = setter.Apply({39, {1}});
  EXPECT_EQ(result.outcome, Outcome::kUnmanageable);
  EXPECT_THAT(result.message, HasSubstr("kernel-managed"));
  EXPECT_FALSE(journal_->HasIrq(39));
  EXPECT_EQ(setter.unmanageable().count(39), 1u);
  int writes = ops_.write_calls;
  EXPECT_EQ(setter.Apply({39, {0}}).outcome, Outcome::kUnmanageable);
  EXPECT_EQ(ops_.write_calls, writes);  // never tried again
}

TEST_F(IrqSetterTest, EpermOnWriteMarksUnmanageableToo) {
  IrqSetter setter(&ops_, journal_.get(), false);
  ActionResult result = setter.Apply({40, {1}});
  EXPECT_EQ(result.outcome, Outcome::kUnmanageable) << result.message;
  EXPECT_FALSE(journal_->HasIrq(40));
  EXPECT_THAT(ops_.affinity[40], ElementsAre(0, 1));
  EXPECT_EQ(setter.unmanageable().count(40), 1u);
}

TEST_F(IrqSetterTest, MissingIrqIsGone) {
  IrqSetter setter(&ops_, journal_.get(), false);
  EXPECT_EQ(setter.Apply({77, {0}}).outcome, Outcome::kGone);
}

TEST_F(IrqSetterTest, DryRun) {
  IrqSetter setter(&ops_, journal_.get(), true);
  ActionResult result = setter.Apply({38, {1}});
  EXPECT_EQ(result.outcome, Outcome::kDryRun);
  EXPECT_THAT(result.message, HasSubstr("would move irq 38: cpus 0-1 -> 1"));
  EXPECT_EQ(ops_.write_calls, 0);
  EXPECT_FALSE(journal_->HasIrq(38));
}

TEST_F(IrqSetterTest, BacksOffAfterExternalChange) {
  IrqSetter setter(&ops_, journal_.get(), false);
  ASSERT_EQ(setter.Apply({38, {1}}).outcome, Outcome::kApplied);
  EXPECT_THAT(setter.CheckExternalChanges(), IsEmpty());
  ops_.affinity[38] = {0};  // irqbalance moved it
  auto changes = setter.CheckExternalChanges();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].kind, ExternalChange::Kind::kIrq);
  EXPECT_THAT(changes[0].message, HasSubstr("backing off"));
  EXPECT_FALSE(journal_->HasIrq(38));
  EXPECT_EQ(setter.Apply({38, {1}}).outcome, Outcome::kBackedOff);
  EXPECT_THAT(ops_.affinity[38], ElementsAre(0));
}

// The lab's no_fighting run: the read just after Locus's own write came
// back unreadable (the kernel's pending mask, cleared mid-read), and Locus
// took its own move for someone else's and backed off.
TEST_F(IrqSetterTest, AnUnreadableAffinityIsNoExternalChange) {
  IrqSetter setter(&ops_, journal_.get(), false);
  ASSERT_EQ(setter.Apply({38, {1}}).outcome, Outcome::kApplied);
  ops_.read_error[38] = EAGAIN;
  EXPECT_THAT(setter.CheckExternalChanges(), IsEmpty());
  EXPECT_TRUE(journal_->HasIrq(38));
  ops_.read_error.erase(38);
  EXPECT_THAT(setter.CheckExternalChanges(), IsEmpty());
  ops_.affinity[38] = {0};  // then someone moves it: still seen
  EXPECT_EQ(setter.CheckExternalChanges().size(), 1u);
}

// The real /proc writer, pointed at a fixture tree instead of /proc.
TEST(ProcIrqOpsTest, ReadsAndWritesThroughRoot) {
  TempTree tree;
  tree.Write("irq/38/smp_affinity_list", "0-1\n");
  auto ops = MakeProcIrqOps(tree.root());
  std::vector<int> cpus;
  ASSERT_EQ(ops->ReadAffinity(38, &cpus), 0);
  EXPECT_THAT(cpus, ElementsAre(0, 1));
  ASSERT_EQ(ops->WriteAffinity(38, {1, 2, 3}), 0);
  ASSERT_EQ(ops->ReadAffinity(38, &cpus), 0);
  EXPECT_THAT(cpus, ElementsAre(1, 2, 3));
  EXPECT_EQ(ops->ReadAffinity(40, &cpus), ENOENT);
  EXPECT_EQ(ops->WriteAffinity(40, {0}), ENOENT);
  // An empty list (a move completing as it was read): read again later.
  tree.Write("irq/39/smp_affinity_list", "\n");
  EXPECT_EQ(ops->ReadAffinity(39, &cpus), EAGAIN);
}

}  // namespace
}  // namespace locus
