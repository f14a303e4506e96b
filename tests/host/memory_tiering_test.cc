#include "agent/host/memory_tiering.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(MemoryTieringTest, TieredHost) {
  std::vector<std::string> errors;
  auto tiering = ReadMemoryTiering(FixturePath("tiered3/sys"),
                                   FixturePath("tiered3/proc"), &errors);
  ASSERT_TRUE(tiering.ok()) << tiering.status();
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_EQ(tiering->demotion_enabled, 1);
  // kdamond 1 is off: its migrate_hot scheme moves nothing. Scheme 0 of
  // kdamond 0 only counts ("stat").
  EXPECT_THAT(tiering->damon_migrations,
              ElementsAre("kdamond 0 scheme 1: migrate_cold to node 2"));
  EXPECT_EQ(tiering->promoted_total, 4100);
  EXPECT_EQ(tiering->demoted_total, 70000 + 500 + 12);
}

TEST(MemoryTieringTest, HostWithoutTheFilesHasNothingAndNoErrors) {
  std::vector<std::string> errors;
  auto tiering = ReadMemoryTiering(FixturePath("numa2/sys"),
                                   FixturePath("numa2/proc"), &errors);
  ASSERT_TRUE(tiering.ok()) << tiering.status();
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_EQ(tiering->demotion_enabled, -1);
  EXPECT_THAT(tiering->damon_migrations, IsEmpty());
  EXPECT_EQ(tiering->promoted_total, -1);
  EXPECT_EQ(tiering->demoted_total, -1);
}

TEST(MemoryTieringTest, KernelWithoutDemotionCountersKeepsThemUnknown) {
  TempTree tree;
  tree.CopyFixture("tiered3");
  tree.Write("proc/vmstat", "nr_free_pages 5\npgpromote_success 7\n");
  tree.Write("sys/kernel/mm/numa/demotion_enabled", "false\n");
  std::vector<std::string> errors;
  auto tiering =
      ReadMemoryTiering(tree.root() + "/sys", tree.root() + "/proc", &errors);
  ASSERT_TRUE(tiering.ok()) << tiering.status();
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_EQ(tiering->demotion_enabled, 0);
  EXPECT_EQ(tiering->promoted_total, 7);
  EXPECT_EQ(tiering->demoted_total, -1);
}

TEST(MemoryTieringTest, MalformedVmstatValueIsNamedAndItsTotalUnknown) {
  TempTree tree;
  tree.CopyFixture("tiered3");
  tree.Write("proc/vmstat",
             "pgpromote_success 4100\npgdemote_kswapd 70000\n"
             "pgdemote_direct 5x0\npgdemote_khugepaged 12\n");
  std::vector<std::string> errors;
  auto tiering =
      ReadMemoryTiering(tree.root() + "/sys", tree.root() + "/proc", &errors);
  ASSERT_TRUE(tiering.ok()) << tiering.status();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr(tree.root() + "/proc/vmstat"));
  EXPECT_THAT(errors[0], HasSubstr("pgdemote_direct 5x0"));
  // A total without one of its parts would read as fewer demotions.
  EXPECT_EQ(tiering->demoted_total, -1);
  EXPECT_EQ(tiering->promoted_total, 4100);
}

TEST(MemoryTieringTest, MalformedSysfsValuesAreNamed) {
  TempTree tree;
  tree.CopyFixture("tiered3");
  const std::string scheme =
      "sys/kernel/mm/damon/admin/kdamonds/0/contexts/0/schemes/1/";
  tree.Write("sys/kernel/mm/numa/demotion_enabled", "maybe\n");
  tree.Write(scheme + "target_nid", "two\n");
  std::vector<std::string> errors;
  auto tiering =
      ReadMemoryTiering(tree.root() + "/sys", tree.root() + "/proc", &errors);
  ASSERT_TRUE(tiering.ok()) << tiering.status();
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_THAT(errors[0], HasSubstr("kernel/mm/numa/demotion_enabled"));
  EXPECT_THAT(errors[1], HasSubstr(scheme + "target_nid"));
  EXPECT_EQ(tiering->demotion_enabled, -1);
  // The scheme still moves pages; only where to is unknown.
  EXPECT_THAT(tiering->damon_migrations,
              ElementsAre("kdamond 0 scheme 1: migrate_cold to an unknown "
                          "node"));
}

TEST(MemoryTieringTest, WrongRootFails) {
  std::vector<std::string> errors;
  auto tiering = ReadMemoryTiering("/nonexistent/locus/sys",
                                   FixturePath("tiered3/proc"), &errors);
  ASSERT_FALSE(tiering.ok());
  EXPECT_THAT(std::string(tiering.status().message()),
              HasSubstr("/nonexistent/locus/sys"));
}

}  // namespace
}  // namespace locus
