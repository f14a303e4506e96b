#include "agent/act/neighbours/numad_exclusions.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/neighbours/fake_numad.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

class NumadExclusionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Journal::Open({tree_.root() + "/journal"});
    ASSERT_TRUE(opened.ok()) << opened.status();
    journal_ = *std::move(opened);
    fake_.journal = journal_.get();
    fake_.alive = {41, 42, 43};
  }
  const std::map<int32_t, int32_t>& Journaled() const {
    return journal_->contents().numad_exclusions;
  }
  std::vector<std::string> Commands() const {
    std::vector<std::string> out;
    for (const FakeNumad::Sent& s : fake_.sent) out.push_back(s.command);
    return out;
  }

  TempTree tree_;
  std::unique_ptr<Journal> journal_;
  FakeNumad fake_;
};

TEST_F(NumadExclusionsTest, ExcludesEachWorkerOnceJournalFirst) {
  NumadExclusions exclusions(fake_, *journal_);
  exclusions.Tick({41, 42});
  exclusions.Tick({41, 42});
  EXPECT_THAT(Commands(), ElementsAre("x 41", "x 42")) << "sent once each";
  EXPECT_THAT(fake_.excluded, UnorderedElementsAre(41, 42));
  // Each command went out with its record already in the journal.
  EXPECT_THAT(fake_.sent[0].journaled, ElementsAre(Pair(41, 200)));
  EXPECT_THAT(Journaled(), ElementsAre(Pair(41, 200), Pair(42, 200)));
  const NumadState& state = exclusions.state();
  EXPECT_TRUE(state.running);
  EXPECT_EQ(state.pid, 200);
  EXPECT_THAT(state.excluded, UnorderedElementsAre(41, 42));
  EXPECT_EQ(state.problem, "");
}

TEST_F(NumadExclusionsTest, AWorkerNoLongerManagedIsHandedBack) {
  NumadExclusions exclusions(fake_, *journal_);
  exclusions.Tick({41, 42});
  exclusions.Tick({41});
  EXPECT_THAT(Commands(), ElementsAre("x 41", "x 42", "r 42"));
  EXPECT_THAT(fake_.excluded, ElementsAre(41));
  EXPECT_THAT(Journaled(), ElementsAre(Pair(41, 200)));
  EXPECT_THAT(exclusions.state().excluded, ElementsAre(41));
}

TEST_F(NumadExclusionsTest, AnEndedWorkerIsForgottenWithoutACommand) {
  NumadExclusions exclusions(fake_, *journal_);
  exclusions.Tick({43});
  fake_.alive.erase(43);
  exclusions.Tick({});
  EXPECT_THAT(Commands(), ElementsAre("x 43"))
      << "its pid may be someone else's now";
  EXPECT_THAT(Journaled(), IsEmpty());
}

TEST_F(NumadExclusionsTest, ARestartedNumadIsToldAgain) {
  NumadExclusions exclusions(fake_, *journal_);
  exclusions.Tick({41});
  fake_.Restart(300);
  exclusions.Tick({41});
  EXPECT_THAT(Commands(), ElementsAre("x 41", "x 41"));
  EXPECT_EQ(fake_.sent[1].numad_pid, 300);
  EXPECT_THAT(fake_.excluded, ElementsAre(41));
  EXPECT_THAT(Journaled(), ElementsAre(Pair(41, 300)));
  EXPECT_EQ(exclusions.state().restarts, 1u);
  EXPECT_EQ(exclusions.state().pid, 300);
}

TEST_F(NumadExclusionsTest, AnExclusionGivenToAGoneNumadIsOnlyForgotten) {
  NumadExclusions exclusions(fake_, *journal_);
  exclusions.Tick({41});
  fake_.Restart(300);
  exclusions.Tick({});
  EXPECT_THAT(Commands(), ElementsAre("x 41")) << "numad 300 never had it";
  EXPECT_THAT(Journaled(), IsEmpty());
}

TEST_F(NumadExclusionsTest, NoNumadForgetsEverything) {
  NumadExclusions exclusions(fake_, *journal_);
  exclusions.Tick({41});
  fake_.running = false;
  exclusions.Tick({41});
  EXPECT_THAT(Journaled(), IsEmpty());
  EXPECT_FALSE(exclusions.state().running);
  EXPECT_THAT(exclusions.state().excluded, IsEmpty());
  fake_.Restart(300);
  exclusions.Tick({41});
  EXPECT_THAT(Commands(), ElementsAre("x 41", "x 41"));
  EXPECT_EQ(exclusions.state().restarts, 1u);
}

TEST_F(NumadExclusionsTest, AFailedSendIsSaidAndTriedAgain) {
  NumadExclusions exclusions(fake_, *journal_);
  fake_.send_error = absl::UnavailableError("numad (pid 200)'s queue is full");
  exclusions.Tick({41});
  EXPECT_THAT(exclusions.state().problem, HasSubstr("queue is full"));
  EXPECT_THAT(Journaled(), IsEmpty()) << "not sent, so not Locus's";
  fake_.send_error = absl::OkStatus();
  exclusions.Tick({41});
  EXPECT_THAT(Commands(), ElementsAre("x 41"));
  EXPECT_EQ(exclusions.state().problem, "");
  EXPECT_THAT(Journaled(), ElementsAre(Pair(41, 200)));
}

TEST_F(NumadExclusionsTest, AFailedRemovalKeepsTheRecordForTheNextTick) {
  NumadExclusions exclusions(fake_, *journal_);
  exclusions.Tick({41});
  fake_.send_error = absl::UnavailableError("queue is full");
  exclusions.Tick({});
  EXPECT_THAT(Journaled(), ElementsAre(Pair(41, 200)));
  fake_.send_error = absl::OkStatus();
  exclusions.Tick({});
  EXPECT_THAT(Commands(), ElementsAre("x 41", "r 41"));
  EXPECT_THAT(Journaled(), IsEmpty());
}

TEST_F(NumadExclusionsTest, AnUnreachableNumadKeepsWhatWasSent) {
  NumadExclusions exclusions(fake_, *journal_);
  exclusions.Tick({41});
  fake_.find_error = absl::FailedPreconditionError(
      "numad's message queue was created by "
      "uid 1000");
  exclusions.Tick({});
  EXPECT_TRUE(exclusions.state().running);
  EXPECT_THAT(exclusions.state().problem, HasSubstr("uid 1000"));
  EXPECT_THAT(Journaled(), ElementsAre(Pair(41, 200)))
      << "kept, to be handed back once it can be";
}

TEST_F(NumadExclusionsTest, RestoreLiftsOnlyWhatTheSameNumadStillHolds) {
  fake_.excluded = {41, 42, 43};
  std::vector<std::string> messages, errors;
  // 41: this numad, alive; 42: ended; 43: given to an earlier numad.
  fake_.alive = {41, 43};
  std::map<int32_t, int32_t> kept;
  RestoreNumadExclusions({{41, 200}, {42, 200}, {43, 150}}, fake_, &messages,
                         &errors, &kept);
  EXPECT_THAT(Commands(), ElementsAre("r 41"));
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_THAT(kept, IsEmpty());
  EXPECT_THAT(messages,
              ElementsAre(HasSubstr("pid 41: exclusion from numad (pid 200) "
                                    "lifted"),
                          HasSubstr("pid 42: exclusion from numad (pid 200): "
                                    "the worker ended"),
                          HasSubstr("pid 43: exclusion from numad (pid 150): "
                                    "that numad no longer runs")));
  EXPECT_THAT(fake_.excluded, UnorderedElementsAre(42, 43));
}

TEST_F(NumadExclusionsTest, RestoreSaysWhatItCouldNotLift) {
  fake_.send_error = absl::UnavailableError("queue is full");
  std::vector<std::string> messages, errors;
  std::map<int32_t, int32_t> kept;
  RestoreNumadExclusions({{41, 200}}, fake_, &messages, &errors, &kept);
  EXPECT_THAT(errors, ElementsAre(HasSubstr("pid 41: exclusion from numad "
                                            "(pid 200) not lifted: queue is "
                                            "full")));
  // The journal's record is kept for a later restore.
  EXPECT_THAT(kept, ElementsAre(Pair(41, 200)));
  fake_.find_error = absl::PermissionDeniedError("msgget: EACCES");
  errors.clear();
  kept.clear();
  RestoreNumadExclusions({{41, 200}}, fake_, &messages, &errors, &kept);
  EXPECT_THAT(errors, ElementsAre(HasSubstr("EACCES")));
  EXPECT_THAT(kept, ElementsAre(Pair(41, 200)));
}

}  // namespace
}  // namespace locus
