#include "agent/core/explain_history.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/snapshot_builder.h"

namespace locus {
namespace {

using ::locus::testing::MakeHost;
using ::locus::testing::MakeWorker;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr EntityKey kTask100{EntityKind::kTask, 100};
constexpr EntityKey kMemory100{EntityKind::kMemory, 100};
constexpr EntityKey kIrq40{EntityKind::kIrq, 40};

// Worker 100 with a second thread, 105.
Snapshot WorkerWithTwoThreads() {
  Snapshot s = MakeHost(2, 2);
  Target worker = MakeWorker(s, 100, 0, -1, 1, 1000);
  ThreadSample second = worker.threads[0];
  second.tid = 105;
  worker.threads.push_back(second);
  s.targets = {worker};
  return s;
}

std::vector<std::string> Whats(const std::vector<Decision>& story) {
  std::vector<std::string> out;
  for (const Decision& d : story) out.push_back(d.what);
  return out;
}

TEST(ExplainHistoryTest, KeepsTheLastDecisionsPerEntity) {
  ExplainHistory history(2);
  history.Note(kIrq40, 1, 10, "first");
  history.Note(kIrq40, 2, 20, "second");
  history.Note(kIrq40, 3, 30, "third");
  EXPECT_THAT(Whats(history.Irq(40)), ElementsAre("second", "third"));
  EXPECT_THAT(history.Irq(41), IsEmpty());
}

TEST(ExplainHistoryTest, AThreadTellsItsProcessesStoryOldestFirst) {
  ExplainHistory history(16);
  history.RememberThreads(WorkerWithTwoThreads());
  history.Note(kMemory100, 2, 20, "migrate");
  history.Note(kTask100, 1, 10, "pin");
  history.Note(kTask100, 3, 30, "pin again");
  EXPECT_THAT(Whats(history.Task(105)),
              ElementsAre("pin", "migrate", "pin again"));
  EXPECT_THAT(history.Task(100), ElementsAre(Field(&Decision::now_ns, 10),
                                             Field(&Decision::now_ns, 20),
                                             Field(&Decision::now_ns, 30)));
  EXPECT_THAT(history.Task(106), IsEmpty()) << "not a thread of a target";
}

TEST(ExplainHistoryTest, ForgetsProcessesThatAreGoneButNotIrqs) {
  ExplainHistory history(16);
  history.RememberThreads(WorkerWithTwoThreads());
  history.Note(kTask100, 1, 10, "pin");
  history.Note(kIrq40, 1, 10, "irq");
  history.RememberThreads(MakeHost(2, 2));  // no targets any more
  EXPECT_THAT(history.Task(100), IsEmpty());
  EXPECT_THAT(history.Task(105), IsEmpty());
  EXPECT_THAT(Whats(history.Irq(40)), ElementsAre("irq"));
}

// A look-alike the scan refused: explain finds why by its pid until a
// snapshot no longer lists it, and each is news once, or again when refused
// for another reason (a reused pid).
TEST(ExplainHistoryTest, RemembersWhyLookAlikesWereRefused) {
  ExplainHistory history(16);
  Snapshot s = WorkerWithTwoThreads();
  const RefusedProcess fake{4242, "nginx",
                            "not trusted as a target: its executable "
                            "/tmp/x/nginx is owned by uid 65534, not root"};
  s.refused_targets = {fake};
  EXPECT_THAT(history.RememberRefused(s),
              ElementsAre(Field(&RefusedProcess::pid, 4242)));
  ASSERT_TRUE(history.Refused(4242).has_value());
  EXPECT_EQ(RefusalMessage(*history.Refused(4242)),
            "pid 4242 (nginx): not trusted as a target: its executable "
            "/tmp/x/nginx is owned by uid 65534, not root");
  EXPECT_FALSE(history.Refused(100).has_value()) << "a target";
  EXPECT_THAT(history.RememberRefused(s), IsEmpty()) << "not news any more";

  s.refused_targets[0].reason = "not trusted as a target: other";
  EXPECT_THAT(history.RememberRefused(s),
              ElementsAre(Field(&RefusedProcess::reason, HasSubstr("other"))));
  s.refused_targets.clear();
  EXPECT_THAT(history.RememberRefused(s), IsEmpty());
  EXPECT_FALSE(history.Refused(4242).has_value()) << "gone";
  s.refused_targets = {fake};
  EXPECT_THAT(history.RememberRefused(s),
              ElementsAre(Field(&RefusedProcess::pid, 4242)))
      << "refused again after a scan without it";
}

}  // namespace
}  // namespace locus
