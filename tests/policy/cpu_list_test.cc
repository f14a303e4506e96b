#include "policy/cpu_list.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(CpuListTest, ParsesKernelFormat) {
  EXPECT_THAT(*ParseCpuList("0-3,8,10-11"), ElementsAre(0, 1, 2, 3, 8, 10, 11));
  EXPECT_THAT(*ParseCpuList("5"), ElementsAre(5));
  EXPECT_THAT(*ParseCpuList(""), IsEmpty());
  EXPECT_THAT(*ParseCpuList("8,0"), ElementsAre(0, 8));
  // As read from sysfs: surrounding blanks and the final newline.
  EXPECT_THAT(*ParseCpuList(" 0-1\n"), ElementsAre(0, 1));
  EXPECT_THAT(*ParseCpuList("\n"), IsEmpty());
}

TEST(CpuListTest, RejectsMalformed) {
  for (const char* bad : {"0-", "-1", "a", "1,,2", "3-1", "1,1", "0-2,2", "1 2",
                          "1\n2", "+1", "99999", "1-2-3", ","}) {
    EXPECT_FALSE(ParseCpuList(bad).ok()) << bad;
  }
}

TEST(CpuListTest, FormatsCompactly) {
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(FormatCpuList({}), "");
  EXPECT_EQ(FormatCpuList({7}), "7");
  EXPECT_EQ(FormatCpuList({1, 3}), "1,3");
}

TEST(CpuListTest, RoundTrips) {
  for (const char* text : {"0", "0-63", "1,3,5-9,100"}) {
    EXPECT_EQ(FormatCpuList(*ParseCpuList(text)), text);
  }
}

}  // namespace
}  // namespace locus
