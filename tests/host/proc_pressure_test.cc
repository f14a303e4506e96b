#include "agent/host/proc_pressure.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(ProcStatCpusTest, PerCpuLinesWithoutTheTotal) {
  auto cpus = ParseProcStatCpus(
      "cpu  300 0 100 600 10 0 0 0 0 0\n"
      "cpu0 100 0 50 340 10 0 0 0 0 0\n"
      "cpu1 200 5 50 260 0 3 2 1 7 0\n"
      "intr 12345 0 0\n");
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  ASSERT_EQ(cpus->size(), 2u);
  EXPECT_EQ((*cpus)[0].cpu, 0);
  EXPECT_EQ((*cpus)[0].busy, 150u);
  EXPECT_EQ((*cpus)[0].total, 500u);  // iowait is idle time
  EXPECT_EQ((*cpus)[1].cpu, 1);
  // guest (7) is already counted in user: not added again.
  EXPECT_EQ((*cpus)[1].busy, 200u + 5 + 50 + 3 + 2 + 1);
  EXPECT_EQ((*cpus)[1].total, (*cpus)[1].busy + 260);
}

TEST(ProcStatCpusTest, NoCpuLineIsAnError) {
  EXPECT_FALSE(ParseProcStatCpus("intr 1 2 3\n").ok());
  EXPECT_FALSE(ParseProcStatCpus("cpu0 1 2\n").ok());
}

TEST(CpuPressureTest, TheSomeLinesFiveMinuteAverage) {
  auto p = ParseCpuPressureAvg300(
      "some avg10=21.59 avg60=52.57 avg300=75.99 total=2324706120\n"
      "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_DOUBLE_EQ(*p, 0.7599);
  EXPECT_FALSE(ParseCpuPressureAvg300("full avg300=1.00\n").ok());
  EXPECT_FALSE(ParseCpuPressureAvg300("some avg300=x\n").ok());
}

Snapshot OneWorker() {
  Snapshot snapshot;
  Target worker;
  worker.pid = 100;
  for (int32_t tid : {100, 101}) {
    ThreadSample thread;
    thread.tid = tid;
    worker.threads.push_back(thread);
  }
  snapshot.targets.push_back(worker);
  return snapshot;
}

TEST(PressureSamplerTest, RatesFromTheGrowthBetweenTwoReads) {
  TempTree proc;
  proc.Write("stat",
             "cpu  0 0 0 0 0 0 0 0 0 0\n"
             "cpu0 100 0 0 100 0 0 0 0 0 0\n"
             "cpu1 10 0 0 190 0 0 0 0 0 0\n");
  proc.Write("100/task/100/schedstat", "1000 5000000 10\n");
  proc.Write("100/task/101/schedstat", "1000 0 10\n");
  PressureSampler sampler(proc.root());
  std::vector<std::string> errors;
  Snapshot first = OneWorker();
  sampler.Sample(&first, &errors);
  EXPECT_THAT(errors, IsEmpty());
  // A baseline only: nothing is known about the tick before it.
  ASSERT_EQ(first.cpus.size(), 2u);
  EXPECT_EQ(first.cpus[0].busy_all, -1);
  EXPECT_EQ(first.targets[0].threads[0].wait_ns, 0u);

  // cpu0 busy for 97 of 100 ticks, cpu1 for 10 of 100; thread 100 waited
  // 18 ms more.
  proc.Write("stat",
             "cpu  0 0 0 0 0 0 0 0 0 0\n"
             "cpu0 190 0 5 103 0 0 2 0 0 0\n"
             "cpu1 15 0 5 280 0 0 0 0 0 0\n");
  proc.Write("100/task/100/schedstat", "2000 23000000 20\n");
  Snapshot second = OneWorker();
  sampler.Sample(&second, &errors);
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_DOUBLE_EQ(second.cpus[0].busy_all, 0.97);
  EXPECT_DOUBLE_EQ(second.cpus[1].busy_all, 0.10);
  EXPECT_EQ(second.targets[0].threads[0].wait_ns, 18'000'000u);
  EXPECT_EQ(second.targets[0].threads[1].wait_ns, 0u);
}

TEST(PressureSamplerTest, AnExitedThreadIsNoErrorAMalformedFileIs) {
  TempTree proc;
  proc.Write("stat", "cpu0 1 0 0 1 0 0 0 0 0 0\n");
  proc.Write("100/task/100/schedstat", "garbage\n");
  PressureSampler sampler(proc.root());
  std::vector<std::string> errors;
  Snapshot snapshot = OneWorker();
  sampler.Sample(&snapshot, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("100/task/100/schedstat"));
}

TEST(PressureSamplerTest, ACounterThatWentBackStartsAfresh) {
  TempTree proc;
  proc.Write("stat", "cpu0 1 0 0 1 0 0 0 0 0 0\n");
  proc.Write("100/task/100/schedstat", "0 9000 1\n");
  PressureSampler sampler(proc.root());
  std::vector<std::string> errors;
  Snapshot snapshot = OneWorker();
  sampler.Sample(&snapshot, &errors);
  // The tid was reused by a new thread: its wait counts from zero.
  proc.Write("100/task/100/schedstat", "0 100 1\n");
  snapshot = OneWorker();
  sampler.Sample(&snapshot, &errors);
  EXPECT_EQ(snapshot.targets[0].threads[0].wait_ns, 0u);
}

}  // namespace
}  // namespace locus
