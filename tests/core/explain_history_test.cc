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

}  // namespace
}  // namespace locus
