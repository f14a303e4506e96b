#include "agent/host/tiering_report.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

v1::MemoryTiering Tiered(std::vector<std::string>* errors) {
  absl::StatusOr<v1::MemoryTiering> report = ReadMemoryTieringReport(
      FixturePath("tiered3/sys"), FixturePath("tiered3/proc"), errors);
  EXPECT_TRUE(report.ok()) << report.status();
  return report.value_or(v1::MemoryTiering());
}

TEST(TieringReportTest, TieredHostNamesWhoMovesWhat) {
  std::vector<std::string> errors;
  const v1::MemoryTiering report = Tiered(&errors);
  EXPECT_THAT(errors, IsEmpty());
  ASSERT_EQ(report.nodes_size(), 3);
  EXPECT_EQ(report.nodes(0).tier(), 4);
  EXPECT_FALSE(report.nodes(0).lower_tier());
  EXPECT_EQ(report.nodes(0).cpus(), 2u);
  EXPECT_EQ(report.nodes(2).tier(), 6);
  EXPECT_TRUE(report.nodes(2).lower_tier());
  EXPECT_EQ(report.nodes(2).cpus(), 0u);
  EXPECT_EQ(report.numa_balancing_mode(), 2);
  EXPECT_TRUE(HasLowerTier(report));
  EXPECT_EQ(TierSummary(report),
            "tier 4: nodes 0-1 (4 CPUs); tier 6: node 2 (no CPUs)");
  EXPECT_EQ(MoverSettings(report),
            "demotion on; tiering promotion on (numa_balancing=2); DAMON: 1 "
            "migrate scheme(s)");
  EXPECT_THAT(
      TierMoverLines(report),
      ElementsAre("node 2: tier 6 (lower, no CPUs): the kernel demotes to it "
                  "(demotion on) and promotes from it (numa_balancing=2); "
                  "Locus leaves its pages",
                  "DAMON kdamond 0 scheme 1: migrate_cold to node 2",
                  "since boot the kernel promoted 4100 pages and demoted "
                  "70512"));
}

TEST(TieringReportTest, MoversOffAreSaidSo) {
  TempTree tree;
  tree.CopyFixture("tiered3");
  tree.Write("sys/kernel/mm/numa/demotion_enabled", "false\n");
  tree.Write("proc/sys/kernel/numa_balancing", "1\n");
  tree.Remove("proc/vmstat");
  std::vector<std::string> errors;
  auto report = ReadMemoryTieringReport(tree.root() + "/sys",
                                        tree.root() + "/proc", &errors);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_EQ(TierMoverLines(*report)[0],
            "node 2: tier 6 (lower, no CPUs): the kernel does not demote to "
            "it (demotion off) and does not promote from it "
            "(numa_balancing=1); Locus leaves its pages");
  EXPECT_EQ(TierMoverLines(*report).size(), 2u);  // no counts line
}

// numa4's node 3 has memory and no CPUs, and the kernel lists no tiers:
// it counts as lower (policy/tiers.h), named as in no tier.
TEST(TieringReportTest, NoTiersListedButACpuLessNode) {
  std::vector<std::string> errors;
  auto report = ReadMemoryTieringReport(FixturePath("numa4/sys"),
                                        FixturePath("numa4/proc"), &errors);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_FALSE(report->nodes(3).has_tier());
  EXPECT_TRUE(report->nodes(3).lower_tier());
  EXPECT_EQ(TierSummary(*report), "no tier: nodes 0-3");
  EXPECT_EQ(TierMoverLines(*report)[0],
            "node 3: no tier (lower, no CPUs): kernel demotion unknown (no "
            "demotion_enabled) and tiering promotion unknown; Locus leaves "
            "its pages");
}

TEST(TieringReportTest, OrdinaryHostHasNoLowerTier) {
  std::vector<std::string> errors;
  auto report = ReadMemoryTieringReport(FixturePath("numa2/sys"),
                                        FixturePath("numa2/proc"), &errors);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(HasLowerTier(*report));
  EXPECT_THAT(TierMoverLines(*report), IsEmpty());
}

TEST(TieringReportTest, NodeTiersGoToTheirNodesInMetrics) {
  v1::Metrics metrics;
  std::vector<std::string> errors;
  *metrics.mutable_memory_tiering() = Tiered(&errors);
  for (int id : {0, 1, 2}) metrics.add_nodes()->set_node(id);
  SetNodeTiers(&metrics);
  EXPECT_EQ(metrics.nodes(1).tier(), 4);
  EXPECT_FALSE(metrics.nodes(1).lower_tier());
  EXPECT_EQ(metrics.nodes(2).tier(), 6);
  EXPECT_TRUE(metrics.nodes(2).lower_tier());
}

}  // namespace
}  // namespace locus
