#include "policy/tiers.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/decide.h"
#include "policy/default_policy.h"
#include "tests/common/snapshot_builder.h"
#include "tests/policy/plan_view.h"

namespace locus {
namespace {

using ::locus::testing::AddMemoryNode;
using ::locus::testing::HasNote;
using ::locus::testing::MakeHost;
using ::locus::testing::MakeWorker;
using ::locus::testing::Migrations;
using ::locus::testing::Pins;
using ::locus::testing::Reasons;
using ::locus::testing::SetFaultsFromPages;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(TiersTest, ACpuLessNodeOfASlowerTierIsLower) {
  Snapshot s = MakeHost(2, 2);
  AddMemoryNode(s, /*tier=*/6);
  EXPECT_EQ(LowerTierNodes(s.topology), (std::vector<char>{0, 0, 1}));
  EXPECT_EQ(LowerTierIds(s.topology), (std::vector<int>{2}));
}

// 6.1 puts a memory-only node in the default DRAM tier even where HMAT
// calls it slower: its pages are left all the same.
TEST(TiersTest, ACpuLessNodeOfTheTopTierIsLowerToo) {
  Snapshot s = MakeHost(2, 2);
  AddMemoryNode(s, /*tier=*/4);
  EXPECT_EQ(LowerTierNodes(s.topology), (std::vector<char>{0, 0, 1}));
}

TEST(TiersTest, WithoutTiersACpuLessNodeIsLower) {
  Snapshot s = MakeHost(2, 2);
  AddMemoryNode(s, /*tier=*/-1);
  EXPECT_EQ(LowerTierNodes(s.topology), (std::vector<char>{0, 0, 1}));
}

TEST(TiersTest, NodesWithCpusAreNeverLowerWithoutTiers) {
  Snapshot s = MakeHost(4, 1);
  EXPECT_EQ(LowerTierNodes(s.topology), (std::vector<char>{0, 0, 0, 0}));
  // Nor is a host of memory-only nodes alone judged against nothing.
  Snapshot bare;
  bare.topology.nodes.resize(2);
  EXPECT_EQ(LowerTierNodes(bare.topology), (std::vector<char>{0, 0}));
}

// A node with CPUs is never lower, whatever its tier: it may be a home. A
// faster CPU-less node (HBM) is still below the homes for Locus.
TEST(TiersTest, ANodeWithCpusIsNeverLower) {
  Snapshot s = MakeHost(3, 1);
  s.topology.nodes[0].tier = 4;
  s.topology.nodes[1].tier = 4;
  s.topology.nodes[2].tier = 6;
  EXPECT_EQ(LowerTierNodes(s.topology), (std::vector<char>{0, 0, 0}));
  AddMemoryNode(s, /*tier=*/2, /*cpu_tier=*/4);
  EXPECT_EQ(LowerTierNodes(s.topology), (std::vector<char>{0, 0, 0, 1}));
}

// Two nodes of two CPUs in tier 4 and a CPU-less node 2 in tier 6; worker
// 100 pinned to node 0 with `pages` per node (faults spread like them).
Snapshot Tiered(std::vector<uint64_t> pages, int tier = 6) {
  Snapshot s = MakeHost(2, 2);
  AddMemoryNode(s, tier);
  Target t = MakeWorker(s, 100, 0, 0, 0, 0);
  for (size_t n = 0; n < pages.size(); ++n) t.resident_pages[n] = pages[n];
  SetFaultsFromPages(t, 0);
  s.targets.push_back(t);
  return s;
}

// What the lab saw before: nginx's memory bound to the CPU-less node,
// pulled back to node 0 page by page.
TEST(TieredDecideTest, PagesOnALowerTierAreLeftToTheKernel) {
  Snapshot s = Tiered({1'000, 0, 50'000});
  Plan plan = Decide(s, DefaultPolicy(), History());
  EXPECT_THAT(Migrations(plan), IsEmpty()) << Reasons(plan);
  EXPECT_THAT(Pins(plan), IsEmpty()) << Reasons(plan);
  EXPECT_TRUE(HasNote(plan,
                      "195 MiB of the workers' memory on nodes without CPUs "
                      "(node 2) left where it is: the kernel's tiering or a "
                      "binding placed it"))
      << Reasons(plan);
}

// Locality is judged over the top tier: 2/3 of those pages (and of the
// faults on them: 625 of the 1000 are on node 2's) are on node 1, moved
// home; the lower tier's are named and left.
TEST(TieredDecideTest, RemotePagesOfTheTopTierStillComeHome) {
  Snapshot s = Tiered({10'000, 20'000, 50'000});
  Plan plan = Decide(s, DefaultPolicy(), History());
  ASSERT_EQ(Migrations(plan).size(), 1u) << Reasons(plan);
  const MigratePages m = Migrations(plan)[0];
  EXPECT_EQ(m.to_node, 0);
  EXPECT_THAT(m.leave_nodes, ElementsAre(2));
  EXPECT_EQ(m.max_bytes, 20'000ull * 4096);
  EXPECT_THAT(plan.actions[0].reason,
              HasSubstr("67% of NUMA faults (250 of 375) off home node 0"));
  EXPECT_THAT(plan.actions[0].reason,
              HasSubstr("; 195 MiB on node 2 without CPUs left where it is"));
}

// Without tiers from the kernel, or in the DRAM tier (6.1), a CPU-less
// node's pages are left all the same.
TEST(TieredDecideTest, ACpuLessNodeIsLeftWhateverItsTier) {
  for (int tier : {-1, 4}) {
    Plan plan =
        Decide(Tiered({1'000, 0, 50'000}, tier), DefaultPolicy(), History());
    EXPECT_THAT(Migrations(plan), IsEmpty()) << tier << Reasons(plan);
  }
}

// Most of an unpinned worker's memory on the lower tier does not draw its
// home there (no CPUs) nor elsewhere: its top-tier pages and its runtime do.
TEST(TieredDecideTest, AHomeIsOnlyANodeWithCpus) {
  Snapshot s = MakeHost(2, 2);
  AddMemoryNode(s, 6);
  for (int i = 0; i < 4; ++i) {
    Target t = MakeWorker(s, 100 + i, i % 2, -1, 2, 50'000);
    t.resident_pages[1 - i % 2] = 1'000;  // a little on the other CPU node
    SetFaultsFromPages(t, i % 2);
    s.targets.push_back(t);
  }
  Plan plan = Decide(s, DefaultPolicy(), History());
  ASSERT_EQ(Pins(plan).size(), 4u) << Reasons(plan);
  for (const PinThread& pin : Pins(plan)) {
    EXPECT_FALSE(s.topology.nodes[pin.node].cpus.empty());
  }
  for (const MigratePages& m : Migrations(plan)) {
    EXPECT_NE(m.to_node, 2);
    EXPECT_THAT(m.leave_nodes, ElementsAre(2));
  }
}

}  // namespace
}  // namespace locus
