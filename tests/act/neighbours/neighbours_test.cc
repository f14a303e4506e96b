#include "agent/act/neighbours/neighbours.h"

#include <memory>
#include <string>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/neighbours/fake_irqbalance.h"
#include "tests/act/neighbours/fake_numad.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;

class NeighboursTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Journal::Open({tree_.root() + "/journal"});
    ASSERT_TRUE(opened.ok()) << opened.status();
    journal_ = *std::move(opened);
    auto irqbalance = std::make_unique<FakeIrqbalance>();
    auto numad = std::make_unique<FakeNumad>();
    irqbalance_ = irqbalance.get();
    numad_ = numad.get();
    numad_->alive = {41};
    neighbours_ = std::make_unique<Neighbours>(
        NeighbourOps{
            std::move(irqbalance),
            std::move(numad),
            {tree_.root() + "/proc", tree_.root() + "/active_profile"}},
        journal_.get());
  }

  void Ticks(int n, CoexistModes modes = {}) {
    for (int i = 0; i < n; ++i) {
      neighbours_->Tick(modes, 0, now_);
      now_ += absl::Seconds(1);
    }
  }

  TempTree tree_;
  std::unique_ptr<Journal> journal_;
  FakeIrqbalance* irqbalance_ = nullptr;
  FakeNumad* numad_ = nullptr;
  std::unique_ptr<Neighbours> neighbours_;
  absl::Time now_ = absl::FromUnixSeconds(1000000);
};

TEST_F(NeighboursTest,
       AnIrqWaitsUntilIrqbalanceBannedItAndIsHeldWhileJournaled) {
  Ticks(1);
  EXPECT_THAT(neighbours_->WaitFor(38),
              Optional(HasSubstr("irq 38: waiting for irqbalance (pid 100)")));
  // The plan proposes the move again each tick, until irqbalance has it.
  int ticks = 0;
  while (neighbours_->WaitFor(38).has_value() && ticks < 10) {
    Ticks(1);
    ++ticks;
  }
  EXPECT_EQ(neighbours_->WaitFor(38), std::nullopt);
  EXPECT_EQ(ticks, 6) << "ask, read, journal and send, its rescan (2 s and 1 s "
                         "of margin), read back";
  EXPECT_THAT(irqbalance_->list, ElementsAre(38));
  // Moved: the journal holds it, so it stays banned while Locus steers it.
  ASSERT_TRUE(journal_->RecordIrq({38, {0, 1}}).ok());
  Ticks(15);
  EXPECT_THAT(irqbalance_->list, ElementsAre(38));
  // Given back to its old affinity: irqbalance gets it back too, once the
  // plan has not asked for it for kAskedIrqHold.
  ASSERT_TRUE(journal_->ForgetIrq(38).ok());
  Ticks(40);
  EXPECT_THAT(irqbalance_->list, IsEmpty());
  EXPECT_THAT(journal_->contents().irqbalance_bans, IsEmpty());
}

// Banned, but not moved yet (the plan proposes it on some ticks only): it
// stays banned while the plan keeps asking, and is given back only once it
// has not asked for kAskedIrqHold.
TEST_F(NeighboursTest, AnIrqThePlanKeepsAskingForStaysBanned) {
  Ticks(1);
  for (int i = 0; i < 10 && neighbours_->WaitFor(38).has_value(); ++i) {
    Ticks(1);
  }
  ASSERT_THAT(irqbalance_->list, ElementsAre(38));
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(neighbours_->WaitFor(38), std::nullopt);
    Ticks(20);  // asked every 20 s, less than kAskedIrqHold
    EXPECT_THAT(irqbalance_->list, ElementsAre(38)) << "after " << i;
  }
  Ticks(40);
  EXPECT_THAT(irqbalance_->list, IsEmpty());
}

TEST_F(NeighboursTest, IrqbalanceOffMovesAtOnceAndGivesBackItsBans) {
  ASSERT_TRUE(journal_->RecordIrq({38, {0, 1}}).ok());
  Ticks(5);
  ASSERT_THAT(irqbalance_->list, ElementsAre(38));
  CoexistModes off;
  off.irqbalance_ban = false;
  Ticks(15, off);
  EXPECT_EQ(neighbours_->WaitFor(39), std::nullopt) << "no waiting when off";
  EXPECT_THAT(irqbalance_->list, IsEmpty());
  EXPECT_FALSE(neighbours_->modes().irqbalance_ban);
}

TEST_F(NeighboursTest, NumadLeavesAloneTheWorkersWhoseThreadsLocusPlaced) {
  ASSERT_TRUE(journal_->RecordThread({41, 43, 7, {0, 1}}).ok());
  Ticks(1);
  EXPECT_THAT(numad_->excluded, ElementsAre(41))
      << "the worker, not its thread";
  EXPECT_THAT(neighbours_->numad().excluded, ElementsAre(41));
  CoexistModes off;
  off.numad_exclude = false;
  Ticks(1, off);
  EXPECT_THAT(numad_->excluded, IsEmpty());
  EXPECT_THAT(journal_->contents().numad_exclusions, IsEmpty());
}

}  // namespace
}  // namespace locus
