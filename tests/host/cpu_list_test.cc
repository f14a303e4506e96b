#include "agent/host/cpu_mask.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// The cpulist parser itself is policy/cpu_list's (tests/policy); these are
// the kernel texts the host model hands it.
TEST(CpuListTest, ReadsSysfsText) {
  auto cpus = ParseCpuList("0-3,8,10-11\n");
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_THAT(*cpus, ElementsAre(0, 1, 2, 3, 8, 10, 11));
  auto none = ParseCpuList("\n");  // a memory-only node
  ASSERT_TRUE(none.ok());
  EXPECT_THAT(*none, IsEmpty());
}

TEST(CpuListTest, FormatSortsAnyOrder) {
  EXPECT_EQ(FormatCpuList({3, 1, 2, 2}), "1-3");
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
