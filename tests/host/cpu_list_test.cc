#include "agent/host/cpu_list.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(CpuListTest, ParsesRangesAndSingles) {
  auto cpus = ParseCpuList("0-3,8,10-11\n");
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_THAT(*cpus, ElementsAre(0, 1, 2, 3, 8, 10, 11));
}

TEST(CpuListTest, EmptyIsNoCpus) {
  auto cpus = ParseCpuList("\n");
  ASSERT_TRUE(cpus.ok());
  EXPECT_THAT(*cpus, IsEmpty());
}

TEST(CpuListTest, SortsAndDeduplicates) {
  auto cpus = ParseCpuList("5,1-2,2,0");
  ASSERT_TRUE(cpus.ok());
  EXPECT_THAT(*cpus, ElementsAre(0, 1, 2, 5));
}

TEST(CpuListTest, Stride) {
  auto cpus = ParseCpuList("0-8:4");
  ASSERT_TRUE(cpus.ok());
  EXPECT_THAT(*cpus, ElementsAre(0, 4, 8));
}

TEST(CpuListTest, RejectsGarbage) {
  for (const char* bad :
       {"a", "1-", "-1", "3-1", "1,,2", "0-99999999", "1 2", "0-4:0", "+1"}) {
    auto cpus = ParseCpuList(bad);
    EXPECT_FALSE(cpus.ok()) << "'" << bad << "' parsed";
    if (!cpus.ok()) {
      EXPECT_THAT(std::string(cpus.status().message()),
                  ::testing::HasSubstr("CPU list"));
    }
  }
}

TEST(CpuListTest, FormatCollapsesRanges) {
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(FormatCpuList({3, 1, 2, 2}), "1-3");
  EXPECT_EQ(FormatCpuList({}), "");
  EXPECT_EQ(FormatCpuList({7}), "7");
}

TEST(CpuListTest, FormatRoundTrips) {
  for (const char* text : {"0", "0-1", "0,2,4-7,9", "1-2,63-64,1000"}) {
    auto cpus = ParseCpuList(text);
    ASSERT_TRUE(cpus.ok());
    EXPECT_EQ(FormatCpuList(*cpus), text);
  }
}

TEST(CpuMaskTest, ParsesWords) {
  auto cpus = ParseCpuMask("3\n");
  ASSERT_TRUE(cpus.ok());
  EXPECT_THAT(*cpus, ElementsAre(0, 1));
  cpus = ParseCpuMask("00000001,80000000");
  ASSERT_TRUE(cpus.ok());
  EXPECT_THAT(*cpus, ElementsAre(31, 32));
  cpus = ParseCpuMask("0");
  ASSERT_TRUE(cpus.ok());
  EXPECT_THAT(*cpus, IsEmpty());
}

TEST(CpuMaskTest, RejectsGarbage) {
  EXPECT_FALSE(ParseCpuMask("").ok());
  EXPECT_FALSE(ParseCpuMask("xyz").ok());
  EXPECT_FALSE(ParseCpuMask("1,,2").ok());
  EXPECT_FALSE(ParseCpuMask("123456789").ok());
}

TEST(CpuListTest, Intersect) {
  EXPECT_THAT(IntersectCpus({0, 1, 2, 5}, {1, 5, 7}), ElementsAre(1, 5));
  EXPECT_THAT(IntersectCpus({0, 1}, {}), IsEmpty());
}

}  // namespace
}  // namespace locus
