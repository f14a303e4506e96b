#include "agent/act/neighbours/irqbalance_bans.h"

#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/neighbours/fake_irqbalance.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

// With irqbalance's 1 s interval: read, send, its rescan (2 intervals and a
// second of margin, nothing asked meanwhile), read back.
constexpr int kTicksToBan = 7;

class IrqbalanceBansTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Journal::Open({tree_.root() + "/journal"});
    ASSERT_TRUE(opened.ok()) << opened.status();
    journal_ = *std::move(opened);
    fake_.journal = journal_.get();
  }

  // `ticks` control ticks, one a second.
  void Run(IrqbalanceBans& bans, const std::set<int>& wanted, int ticks = 1) {
    for (int i = 0; i < ticks; ++i) {
      fake_.now = now_;
      bans.Tick(wanted, now_);
      now_ += absl::Seconds(1);
    }
  }
  const std::map<int, int32_t>& Journaled() const {
    return journal_->contents().irqbalance_bans;
  }

  TempTree tree_;
  std::unique_ptr<Journal> journal_;
  FakeIrqbalance fake_;
  absl::Time now_ = absl::FromUnixSeconds(1000000);
};

TEST_F(IrqbalanceBansTest, NoIrqbalanceEveryIrqMayMove) {
  fake_.running = false;
  IrqbalanceBans bans(fake_, *journal_);
  EXPECT_FALSE(bans.Banned(38)) << "not looked yet";
  Run(bans, {38});
  EXPECT_TRUE(bans.Banned(38));
  EXPECT_FALSE(bans.state().running);
  EXPECT_THAT(bans.state().pending, IsEmpty());
  EXPECT_THAT(fake_.started, IsEmpty());
  // While none runs, /proc is scanned every kIrqbalanceLookInterval only.
  Run(bans, {38}, 10);
  EXPECT_LE(fake_.find_calls, 6);
}

// Read, journal, send (others' bans kept), wait out its rescan, confirm.
TEST_F(IrqbalanceBansTest, BansWantedKeepingOthersJournalFirst) {
  fake_.list = {40};  // --banirq=40
  IrqbalanceBans bans(fake_, *journal_);
  Run(bans, {38}, 2);
  EXPECT_FALSE(bans.Banned(38)) << "sent, not confirmed";
  EXPECT_THAT(bans.state().pending, ElementsAre(38));
  ASSERT_THAT(fake_.SentSettings(), ElementsAre("settings ban irqs 38 40"));
  // Journaled before the command went: 38 only (40 is someone else's).
  EXPECT_THAT(fake_.started[1].journaled, ElementsAre(Pair(38, 100)));
  Run(bans, {38}, kTicksToBan - 4);
  EXPECT_FALSE(bans.Banned(38)) << "its rescan is not over yet";
  EXPECT_EQ(fake_.started.size(), 2u) << "nothing asked while it rescans";
  Run(bans, {38}, 2);
  EXPECT_TRUE(bans.Banned(38));
  EXPECT_TRUE(bans.Banned(40));
  EXPECT_FALSE(bans.Banned(41));
  EXPECT_THAT(fake_.list, ElementsAre(38, 40));
  const IrqbalanceState& state = bans.state();
  EXPECT_TRUE(state.running);
  EXPECT_EQ(state.pid, 100);
  EXPECT_EQ(state.socket, "/run/irqbalance/irqbalance100.sock");
  EXPECT_THAT(state.banned_by_locus, ElementsAre(38));
  EXPECT_THAT(state.banned_by_others, ElementsAre(40));
  EXPECT_THAT(state.pending, IsEmpty());
  EXPECT_EQ(state.problem, "");
  EXPECT_THAT(Journaled(), ElementsAre(Pair(38, 100)));
  EXPECT_THAT(fake_.handled,
              ElementsAre("setup", "settings ban irqs 38 40", "setup"));
  EXPECT_LE(fake_.open, 1);
  EXPECT_EQ(fake_.started_in_hold, 0);
}

// irqbalance applies a changed list at its next scan, which rescans and
// holds its loop a sleep interval: Locus asks nothing until that is over
// (an answer to a client that has gone kills 1.9.2), and the ban is in
// effect when the list is read back.
TEST_F(IrqbalanceBansTest, NothingIsAskedWhileItsRescanHoldsIt) {
  fake_.sleep_seconds = 10;
  fake_.scan_after = absl::Seconds(10);  // the longest: a whole interval
  fake_.list = {40};
  IrqbalanceBans bans(fake_, *journal_);
  Run(bans, {38}, 3);
  ASSERT_THAT(fake_.list, ElementsAre(38, 40));
  EXPECT_TRUE(bans.Banned(40)) << "listed at the first read: in effect";
  Run(bans, {38}, 20);
  EXPECT_FALSE(bans.Banned(38)) << "its rescan may still hold it";
  EXPECT_EQ(fake_.started.size(), 2u);
  Run(bans, {38}, 2);
  EXPECT_TRUE(bans.Banned(38)) << "read back after 2 intervals and 1 s";
  EXPECT_EQ(fake_.started_in_hold, 0);
  // Dropped now (Locus killed), nothing was in flight.
  Run(bans, {38}, 30);
  EXPECT_EQ(fake_.started_in_hold, 0);
  EXPECT_FALSE(fake_.died_of_sigpipe);
}

// Someone else's change to the list shows at a read: in effect one sleep
// interval later.
TEST_F(IrqbalanceBansTest, OthersNewBanIsInEffectASleepIntervalAfterItIsSeen) {
  fake_.sleep_seconds = 10;
  IrqbalanceBans bans(fake_, *journal_);
  Run(bans, {}, 2);
  fake_.list = {38};
  Run(bans, {}, 11);  // the refresh read sees it
  ASSERT_THAT(bans.state().banned_by_others, ElementsAre(38));
  EXPECT_FALSE(bans.Banned(38));
  Run(bans, {}, 10);
  EXPECT_TRUE(bans.Banned(38));
}

TEST_F(IrqbalanceBansTest, OthersBanIsTheirsAndNotJournaled) {
  fake_.list = {38};
  IrqbalanceBans bans(fake_, *journal_);
  Run(bans, {38}, 3);
  EXPECT_TRUE(bans.Banned(38));
  EXPECT_THAT(fake_.SentSettings(), IsEmpty());
  EXPECT_THAT(Journaled(), IsEmpty());
  EXPECT_THAT(bans.state().banned_by_others, ElementsAre(38));
  // They take it off: the next read finds it gone, and Locus bans it.
  fake_.list.clear();
  Run(bans, {38}, 10 + kTicksToBan);
  EXPECT_THAT(fake_.SentSettings(), ElementsAre("settings ban irqs 38"));
  EXPECT_THAT(Journaled(), ElementsAre(Pair(38, 100)));
  EXPECT_THAT(bans.state().banned_by_locus, ElementsAre(38));
}

TEST_F(IrqbalanceBansTest, UnwantedSentWithoutThenForgotten) {
  fake_.list = {40};
  IrqbalanceBans bans(fake_, *journal_);
  Run(bans, {38, 39}, kTicksToBan);
  ASSERT_THAT(fake_.list, ElementsAre(38, 39, 40));
  Run(bans, {39}, 1);
  ASSERT_THAT(fake_.SentSettings().back(), "settings ban irqs 39 40");
  // Still journaled while the removal is unconfirmed.
  EXPECT_THAT(fake_.started.back().journaled,
              ElementsAre(Pair(38, 100), Pair(39, 100)));
  Run(bans, {39}, kTicksToBan - 2);
  EXPECT_THAT(fake_.list, ElementsAre(39, 40));
  EXPECT_THAT(Journaled(), ElementsAre(Pair(39, 100)));
  EXPECT_FALSE(bans.Banned(38));
  // Nothing wanted: the list goes back to others' bans alone.
  Run(bans, {}, kTicksToBan);
  EXPECT_THAT(fake_.list, ElementsAre(40));
  EXPECT_THAT(Journaled(), IsEmpty());
  EXPECT_THAT(bans.state().banned_by_others, ElementsAre(40));
  EXPECT_THAT(bans.state().banned_by_locus, IsEmpty());
}

// An IRQ Locus no longer wants is off irqbalance's list from the send on:
// the read from before still lists it, but irqbalance balances it again at
// its next scan, so it is no longer taken as banned (Locus would move it
// and irqbalance move it back), until a later send bans it again.
TEST_F(IrqbalanceBansTest, AnIrqSentWithoutIsNotBannedFromTheSendOn) {
  fake_.list = {40};
  IrqbalanceBans bans(fake_, *journal_);
  Run(bans, {38, 39}, kTicksToBan);
  ASSERT_TRUE(bans.Banned(38));
  Run(bans, {39}, 1);
  ASSERT_THAT(fake_.SentSettings().back(), "settings ban irqs 39 40");
  EXPECT_FALSE(bans.Banned(38)) << "sent without it";
  EXPECT_THAT(bans.state().banned_by_locus, ElementsAre(39));
  EXPECT_TRUE(bans.Banned(39)) << "sent with it, in effect before";
  // Wanted again within the rescan's quiet period: nothing is sent until
  // it is over, and it is not banned meanwhile.
  Run(bans, {38, 39}, kTicksToBan - 3);
  EXPECT_FALSE(bans.Banned(38));
  Run(bans, {38, 39}, kTicksToBan);
  EXPECT_THAT(fake_.list, ElementsAre(38, 39, 40));
  EXPECT_TRUE(bans.Banned(38)) << "banned again, read back";
}

// A tick asks once and goes on (the loop's tick must not wait out
// irqbalance's rescan): counted in polls, not in a wall-clock bound that a
// busy machine breaks.
TEST_F(IrqbalanceBansTest, SlowAnswersWaitAcrossTicks) {
  fake_.answer_after_polls = 5;  // as during a rescan
  IrqbalanceBans bans(fake_, *journal_);
  for (int i = 0; i < 25; ++i) {
    const int polls = fake_.polls;
    Run(bans, {38});
    EXPECT_LE(fake_.polls - polls, 1) << "tick " << i << " waited for it";
    EXPECT_LE(fake_.open, 1) << "one request at a time";
  }
  EXPECT_TRUE(bans.Banned(38));
  EXPECT_THAT(fake_.handled,
              ElementsAre("setup", "settings ban irqs 38", "setup"));
  EXPECT_EQ(bans.state().problem, "");
}

// Closing it would kill irqbalance 1.9.2 when it answers at last.
TEST_F(IrqbalanceBansTest, AnUnansweredRequestIsSaidAndWaitedFor) {
  fake_.hang = true;
  IrqbalanceBans bans(fake_, *journal_);
  Run(bans, {38}, 30);
  EXPECT_EQ(fake_.started.size(), 1u);
  EXPECT_EQ(bans.state().problem, "");
  EXPECT_THAT(bans.state().pending, ElementsAre(38));
  Run(bans, {38}, 1);
  EXPECT_THAT(bans.state().problem,
              AllOf(HasSubstr("irqbalance (pid 100) has not answered 'setup' "
                              "in 30s"),
                    HasSubstr("still waiting")));
  Run(bans, {38}, 60);
  EXPECT_EQ(fake_.open, 1) << "the request stays open";
  EXPECT_EQ(fake_.started.size(), 1u);
  fake_.hang = false;
  Run(bans, {38}, kTicksToBan - 1);
  EXPECT_EQ(fake_.started.size(), 3u);
  EXPECT_TRUE(bans.Banned(38));
  EXPECT_EQ(bans.state().problem, "");
  EXPECT_FALSE(fake_.died_of_sigpipe);
}

// At exit the request in flight is answered before it is closed.
TEST_F(IrqbalanceBansTest, FinishWaitsForTheAnswerInFlight) {
  fake_.answer_after_polls = 3;
  IrqbalanceBans bans(fake_, *journal_);
  Run(bans, {38}, 1);
  ASSERT_EQ(fake_.open, 1);
  bans.Finish(absl::Seconds(5));
  EXPECT_EQ(fake_.open, 0);
  EXPECT_THAT(fake_.handled, ElementsAre("setup"));
  EXPECT_FALSE(fake_.died_of_sigpipe);
}

TEST_F(IrqbalanceBansTest, RestartIsCountedAndBansGivenAgain) {
  IrqbalanceBans bans(fake_, *journal_);
  Run(bans, {38, 39}, kTicksToBan);
  ASSERT_THAT(Journaled(), ElementsAre(Pair(38, 100), Pair(39, 100)));
  fake_.Restart(200, {41});  // runtime bans gone; --banirq=41
  Run(bans, {38}, 1);
  EXPECT_EQ(bans.state().restarts, 1u);
  EXPECT_EQ(bans.state().pid, 200);
  EXPECT_FALSE(bans.Banned(38)) << "the new one has not banned it yet";
  Run(bans, {38}, kTicksToBan - 1);
  EXPECT_TRUE(bans.Banned(38));
  EXPECT_THAT(fake_.list, ElementsAre(38, 41));
  // Re-banned under the new pid; the old pid's record of 39 forgotten.
  EXPECT_THAT(Journaled(), ElementsAre(Pair(38, 200)));
  EXPECT_THAT(bans.state().banned_by_others, ElementsAre(41));
  EXPECT_EQ(bans.state().restarts, 1u);
}

TEST_F(IrqbalanceBansTest, RestartMidRequestIsNoticed) {
  fake_.answer_after_polls = 2;
  IrqbalanceBans bans(fake_, *journal_);
  Run(bans, {38}, 4);  // the send is in flight
  fake_.Restart(300);
  Run(bans, {38}, 20);
  EXPECT_EQ(bans.state().restarts, 1u);
  EXPECT_TRUE(bans.Banned(38));
  EXPECT_THAT(fake_.list, ElementsAre(38));
  EXPECT_THAT(Journaled(), ElementsAre(Pair(38, 300)));
}

TEST_F(IrqbalanceBansTest, StoppedIrqbalanceForgetsRecords) {
  IrqbalanceBans bans(fake_, *journal_);
  Run(bans, {38}, 4);
  ASSERT_THAT(Journaled(), ElementsAre(Pair(38, 100)));
  fake_.running = false;
  Run(bans, {38}, 1);
  EXPECT_FALSE(bans.state().running);
  EXPECT_TRUE(bans.Banned(38));
  EXPECT_THAT(Journaled(), IsEmpty());
  // A new one later: counted, and banned there.
  fake_.Restart(400);
  Run(bans, {38}, 6);
  EXPECT_EQ(bans.state().restarts, 1u);
  EXPECT_THAT(Journaled(), ElementsAre(Pair(38, 400)));
  EXPECT_THAT(fake_.list, ElementsAre(38));
}

TEST_F(IrqbalanceBansTest, OthersEditsSeenAtRefreshAndKept) {
  IrqbalanceBans bans(fake_, *journal_);
  Run(bans, {38}, kTicksToBan);
  fake_.list.insert(41);  // someone bans 41
  fake_.list.erase(38);   // and drops Locus's 38
  Run(bans, {38}, 6);
  EXPECT_THAT(bans.state().banned_by_others, IsEmpty()) << "not read yet";
  Run(bans, {38}, 4 + kTicksToBan);
  EXPECT_THAT(fake_.list, ElementsAre(38, 41));
  EXPECT_THAT(bans.state().banned_by_others, ElementsAre(41));
  EXPECT_THAT(bans.state().banned_by_locus, ElementsAre(38));
  // Locus lets go of 38: 41 stays.
  Run(bans, {}, kTicksToBan);
  EXPECT_THAT(fake_.list, ElementsAre(41));
}

TEST_F(IrqbalanceBansTest, UnwritableJournalSendsNothing) {
  std::ofstream(tree_.root() + "/blocked") << "x";
  auto blocked = Journal::Open({tree_.root() + "/blocked/journal"});
  ASSERT_TRUE(blocked.ok());
  fake_.journal = blocked->get();
  IrqbalanceBans bans(fake_, **blocked);
  Run(bans, {38}, 10);
  EXPECT_THAT(fake_.SentSettings(), IsEmpty());
  EXPECT_FALSE(bans.Banned(38));
  EXPECT_THAT(bans.state().problem,
              AllOf(HasSubstr("irq 38: not handed to irqbalance (pid 100)"),
                    HasSubstr("not a directory")));
}

TEST_F(IrqbalanceBansTest, UnusableIrqbalanceSaysWhy) {
  fake_.find_error = absl::FailedPreconditionError(
      "irqbalance (pid 100) has no control socket Locus can reach");
  IrqbalanceBans bans(fake_, *journal_);
  Run(bans, {38}, 3);
  EXPECT_TRUE(bans.state().running);
  EXPECT_FALSE(bans.Banned(38));
  EXPECT_THAT(bans.state().pending, ElementsAre(38));
  EXPECT_THAT(bans.state().problem, HasSubstr("no control socket"));
  EXPECT_THAT(fake_.started, IsEmpty());
}

TEST_F(IrqbalanceBansTest, MalformedReplyChangesNothing) {
  fake_.setup_reply = "SLEEP 10 \x1b[2J BANNED";
  IrqbalanceBans bans(fake_, *journal_);
  Run(bans, {38}, 5);
  EXPECT_THAT(fake_.SentSettings(), IsEmpty());
  EXPECT_THAT(Journaled(), IsEmpty());
  EXPECT_THAT(bans.state().problem,
              AllOf(HasSubstr("irqbalance (pid 100): irqbalance's reply to "
                              "'setup' has no 'BANNED <cpu mask>'"),
                    HasSubstr("\\x1b[2J")));
}

TEST_F(IrqbalanceBansTest, ListThatCannotBeSentBackIsLeftAlone) {
  fake_.list = {0, 40};  // --banirq=0: no command can keep it
  IrqbalanceBans bans(fake_, *journal_);
  Run(bans, {38}, 5);
  EXPECT_THAT(fake_.SentSettings(), IsEmpty());
  EXPECT_THAT(Journaled(), IsEmpty());
  EXPECT_THAT(bans.state().problem, HasSubstr("IRQ 0 cannot be sent"));

  // Too many IRQs for one command: nothing journaled, nothing sent.
  fake_.list = {40};
  std::set<int> many;
  for (int irq = 1000; irq < 1200; ++irq) many.insert(irq);
  Run(bans, many, 20);
  EXPECT_THAT(fake_.SentSettings(), IsEmpty());
  EXPECT_THAT(Journaled(), IsEmpty());
  EXPECT_THAT(bans.state().problem, HasSubstr("make a command of"));
}

TEST_F(IrqbalanceBansTest, WantedIrqZeroIsSaidOthersBanned) {
  IrqbalanceBans bans(fake_, *journal_);
  Run(bans, {0, 38}, kTicksToBan);
  EXPECT_TRUE(bans.Banned(38));
  EXPECT_THAT(fake_.list, ElementsAre(38));
  EXPECT_THAT(bans.state().problem, HasSubstr("IRQ 0 cannot be banned"));
}

// A ban a restore could not give back stays journaled (issue #39): the
// running agent, which does not want that IRQ, takes it off the list and
// forgets the record.
TEST_F(IrqbalanceBansTest, AKeptBanIsGivenBackByTheRunningAgent) {
  ASSERT_TRUE(journal_->RecordIrqbalanceBan(100, 38).ok());
  fake_.list = {38, 40};
  IrqbalanceBans bans(fake_, *journal_);
  Run(bans, {}, kTicksToBan);
  EXPECT_THAT(fake_.list, ElementsAre(40));
  EXPECT_THAT(Journaled(), IsEmpty());
}

TEST_F(IrqbalanceBansTest, RestoreTakesOutExactlyLocusBans) {
  fake_.list = {38, 40, 41, 42};
  const std::map<int, int32_t> bans = {
      {38, 100}, {41, 100}, {43, 100}, {50, 99}};
  std::vector<std::string> messages, errors;
  std::map<int, int32_t> kept;
  RestoreIrqbalanceBans(bans, fake_, absl::Seconds(5), &messages, &errors,
                        &kept);
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_THAT(kept, IsEmpty());
  EXPECT_THAT(fake_.list, ElementsAre(40, 42));
  EXPECT_THAT(fake_.SentSettings(), ElementsAre("settings ban irqs 40 42"));
  EXPECT_THAT(
      messages,
      UnorderedElementsAre(
          "irq 50: irqbalance (pid 99), which Locus had it banned in, is "
          "gone (an irqbalance started since has no runtime bans): nothing "
          "to give back",
          "irq 38: given back to irqbalance (pid 100), which balances it "
          "again",
          "irq 41: given back to irqbalance (pid 100), which balances it "
          "again",
          "irq 43: no longer on irqbalance (pid 100)'s ban list: nothing to "
          "give back"));
}

TEST_F(IrqbalanceBansTest, RestoreWithoutIrqbalanceOrAnswer) {
  fake_.running = false;
  std::vector<std::string> messages, errors;
  std::map<int, int32_t> kept;
  RestoreIrqbalanceBans({{38, 100}}, fake_, absl::Seconds(1), &messages,
                        &errors, &kept);
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_THAT(messages, ElementsAre(HasSubstr("nothing to give back")));
  EXPECT_THAT(kept, IsEmpty());

  fake_.running = true;
  fake_.hang = true;
  messages.clear();
  const absl::Time before = absl::Now();
  RestoreIrqbalanceBans({{38, 100}}, fake_, absl::Milliseconds(100), &messages,
                        &errors, &kept);
  EXPECT_LT(absl::Now() - before, absl::Seconds(2));
  EXPECT_THAT(messages, IsEmpty());
  EXPECT_THAT(errors, ElementsAre(AllOf(
                          HasSubstr("irq 38: not given back to irqbalance "
                                    "(pid 100)"),
                          HasSubstr("did not answer 'setup' within"))));
  EXPECT_EQ(fake_.open, 0);
  // Kept: the journal's record is all that says the ban is Locus's.
  EXPECT_THAT(kept, ElementsAre(Pair(38, 100)));

  fake_.hang = false;
  fake_.find_error = absl::FailedPreconditionError("2 irqbalance processes");
  errors.clear();
  kept.clear();
  RestoreIrqbalanceBans({{38, 100}}, fake_, absl::Seconds(1), &messages,
                        &errors, &kept);
  EXPECT_THAT(errors, ElementsAre(HasSubstr("2 irqbalance processes")));
  EXPECT_THAT(kept, ElementsAre(Pair(38, 100)));
}

// Issue #39: a restore that starts inside a rescan gets no answer before
// the rescan ends, up to the interval irqbalance was started with (40 s is
// legal): that interval, known from its command line before "setup" can
// say it, stretches a shorter timeout (as `locusd --restore`'s 25 s).
TEST_F(IrqbalanceBansTest, RestoreWaitsAsLongAsTheStartedIntervalNeeds) {
  fake_.list = {38, 40};
  fake_.answer_after_polls = 10;  // each answer ~200 ms away
  fake_.ignores_sigpipe = true;   // as under systemd: outlives a timeout
  std::vector<std::string> messages, errors;
  std::map<int, int32_t> kept;
  RestoreIrqbalanceBans({{38, 100}}, fake_, absl::Milliseconds(50), &messages,
                        &errors, &kept);
  EXPECT_THAT(errors, ElementsAre(HasSubstr("did not answer 'setup'")))
      << "interval unknown: the timeout alone";
  EXPECT_THAT(kept, ElementsAre(Pair(38, 100)));

  fake_.started_interval = 1;  // an exchange may take 7 s
  errors.clear();
  kept.clear();
  RestoreIrqbalanceBans({{38, 100}}, fake_, absl::Milliseconds(50), &messages,
                        &errors, &kept);
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_THAT(kept, IsEmpty());
  EXPECT_THAT(messages, ElementsAre(HasSubstr("irq 38: given back")));
  EXPECT_THAT(fake_.list, ElementsAre(40));
}

}  // namespace
}  // namespace locus
