#include "policy/tiers.h"

#include <vector>

#include "gtest/gtest.h"
#include "tests/common/snapshot_builder.h"

namespace locus {
namespace {

using ::locus::testing::AddMemoryNode;
using ::locus::testing::MakeHost;

TEST(TiersTest, ACpuLessNodeOfASlowerTierIsLower) {
  Snapshot s = MakeHost(2, 2);
  AddMemoryNode(s, /*tier=*/6);
  EXPECT_EQ(TopTier(s.topology), 4);
  EXPECT_EQ(LowerTierNodes(s.topology), (std::vector<char>{0, 0, 1}));
  EXPECT_EQ(TierName(s.topology.nodes[2], true), "tier 6 (lower)");
  EXPECT_EQ(TierName(s.topology.nodes[0], false), "tier 4");
}

// The kernel puts a memory-only node without performance figures in the
// default DRAM tier: as fast as the others, its pages are only remote.
TEST(TiersTest, ACpuLessNodeOfTheTopTierIsNot) {
  Snapshot s = MakeHost(2, 2);
  AddMemoryNode(s, /*tier=*/4);
  EXPECT_EQ(LowerTierNodes(s.topology), (std::vector<char>{0, 0, 0}));
}

TEST(TiersTest, WithoutTiersACpuLessNodeIsLower) {
  Snapshot s = MakeHost(2, 2);
  AddMemoryNode(s, /*tier=*/-1);
  EXPECT_EQ(TopTier(s.topology), -1);
  EXPECT_EQ(LowerTierNodes(s.topology), (std::vector<char>{0, 0, 1}));
  EXPECT_EQ(TierName(s.topology.nodes[2], true), "no tier (lower)");
}

TEST(TiersTest, NodesWithCpusAreNeverLowerWithoutTiers) {
  Snapshot s = MakeHost(4, 1);
  EXPECT_EQ(LowerTierNodes(s.topology), (std::vector<char>{0, 0, 0, 0}));
  // Nor is a host of memory-only nodes alone judged against nothing.
  Snapshot bare;
  bare.topology.nodes.resize(2);
  EXPECT_EQ(LowerTierNodes(bare.topology), (std::vector<char>{0, 0}));
}

// A faster CPU-less tier (HBM above DRAM) is not lower: its pages are as
// near as home's, and remote like any other node's.
TEST(TiersTest, AFasterCpuLessTierIsNotLower) {
  Snapshot s = MakeHost(2, 2);
  AddMemoryNode(s, /*tier=*/2);
  EXPECT_EQ(TopTier(s.topology), 4);
  EXPECT_EQ(LowerTierNodes(s.topology), (std::vector<char>{0, 0, 0}));
}

}  // namespace
}  // namespace locus
