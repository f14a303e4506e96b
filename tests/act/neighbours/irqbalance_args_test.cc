// irqbalance 1.9.2's interval read from its command line as its
// getopt_long reads it.
#include "agent/act/neighbours/irqbalance_args.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using ::testing::ElementsAre;

int Interval(std::vector<std::string> args) {
  args.insert(args.begin(), "/usr/sbin/irqbalance");
  return IrqbalanceIntervalArg(args);
}

TEST(IrqbalanceIntervalArgTest, DefaultWithoutTheOption) {
  EXPECT_EQ(Interval({}), 10);
  EXPECT_EQ(Interval({"--foreground", "--banirq=38", "-i", "40"}), 10)
      << "values of other options are not intervals";
  EXPECT_EQ(Interval({"--pid", "-t5"}), 10) << "-t5 is --pid's file";
}

TEST(IrqbalanceIntervalArgTest, EveryFormGetoptTakes) {
  EXPECT_EQ(Interval({"--foreground", "--interval=40"}), 40);
  EXPECT_EQ(Interval({"--interval", "40"}), 40);
  EXPECT_EQ(Interval({"--inter=40"}), 40) << "a prefix of one option";
  EXPECT_EQ(Interval({"-t", "40"}), 40);
  EXPECT_EQ(Interval({"-t40"}), 40);
  EXPECT_EQ(Interval({"-ft40"}), 40) << "after flags in one word";
  EXPECT_EQ(Interval({"-fj", "-t", "7"}), 7);
  EXPECT_EQ(Interval({"-t", "5", "--interval=40"}), 40) << "the last wins";
  EXPECT_EQ(Interval({"-t", " 40s"}), 40) << "strtol's leading blanks, tail";
  EXPECT_EQ(Interval({"stray", "-t", "40"}), 40) << "getopt permutes";
  EXPECT_EQ(Interval({"--", "-t", "40"}), 10) << "no options after --";
}

// What irqbalance would have exited on: the interval is not known.
TEST(IrqbalanceIntervalArgTest, UnknownWhereIrqbalanceWouldNotRun) {
  EXPECT_EQ(Interval({"-t", "0"}), 0);
  EXPECT_EQ(Interval({"-t", "-3"}), 0);
  EXPECT_EQ(Interval({"--interval=x"}), 0);
  EXPECT_EQ(Interval({"--interval"}), 0);
  EXPECT_EQ(Interval({"--p=1"}), 0) << "ambiguous: powerthresh, pid, ...";
  EXPECT_EQ(Interval({"-q"}), 0);
}

}  // namespace
}  // namespace locus
