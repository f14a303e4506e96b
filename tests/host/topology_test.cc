#include "agent/host/topology.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr uint64_t kGiB = 1024ull * 1024 * 1024;

std::string Sys(const std::string& fixture) {
  return FixturePath(fixture + "/sys");
}

TEST(TopologyTest, OneNode) {
  std::vector<std::string> errors;
  auto topo = ReadTopology(Sys("numa1"), &errors);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_THAT(errors, IsEmpty());
  ASSERT_EQ(topo->nodes.size(), 1u);
  EXPECT_EQ(topo->nodes[0].id, 0);
  EXPECT_THAT(topo->nodes[0].cpus, ElementsAre(0, 1));
  EXPECT_EQ(topo->nodes[0].mem_total_bytes, 4548384ull * 1024);
  EXPECT_EQ(topo->nodes[0].mem_free_bytes, 4305980ull * 1024);
  EXPECT_THAT(topo->nodes[0].distances, ElementsAre(10));
  EXPECT_THAT(topo->cpu_node, ElementsAre(0, 0));
}

TEST(TopologyTest, TwoNodes) {
  std::vector<std::string> errors;
  auto topo = ReadTopology(Sys("numa2"), &errors);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_THAT(errors, IsEmpty());
  ASSERT_EQ(topo->nodes.size(), 2u);
  EXPECT_THAT(topo->nodes[1].cpus, ElementsAre(2, 3));
  EXPECT_THAT(topo->nodes[0].distances, ElementsAre(10, 20));
  EXPECT_THAT(topo->nodes[1].distances, ElementsAre(20, 10));
  EXPECT_THAT(topo->cpu_node, ElementsAre(0, 0, 1, 1));
  EXPECT_EQ(NodeOfCpu(*topo, 3), 1);
  EXPECT_EQ(NodeOfCpu(*topo, 4), -1);
  EXPECT_EQ(NodeOfCpu(*topo, -1), -1);
  EXPECT_EQ(NodeIndex(*topo, 1), 1);
  EXPECT_EQ(NodeIndex(*topo, 2), -1);
}

TEST(TopologyTest, MemoryOnlyNodeAndOfflineCpu) {
  std::vector<std::string> errors;
  auto topo = ReadTopology(Sys("numa4"), &errors);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_THAT(errors, IsEmpty());
  ASSERT_EQ(topo->nodes.size(), 4u);
  // CPU 5 is offline although node 2's cpulist still names it.
  EXPECT_THAT(topo->nodes[2].cpus, ElementsAre(4));
  EXPECT_THAT(topo->nodes[3].cpus, IsEmpty());
  EXPECT_EQ(topo->nodes[3].mem_total_bytes, 8 * kGiB);
  EXPECT_THAT(topo->cpu_node, ElementsAre(0, 0, 1, 1, 2, -1));
  EXPECT_THAT(topo->nodes[0].distances, ElementsAre(10, 16, 22, 32));
  EXPECT_THAT(topo->nodes[3].distances, ElementsAre(32, 22, 16, 10));
}

TEST(TopologyTest, EightNodesAsymmetric) {
  std::vector<std::string> errors;
  auto topo = ReadTopology(Sys("numa8"), &errors);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_THAT(errors, IsEmpty());
  ASSERT_EQ(topo->nodes.size(), 8u);
  EXPECT_THAT(topo->nodes[7].cpus, ElementsAre(28, 29, 30));  // 31 offline
  EXPECT_EQ(topo->cpu_node.size(), 32u);
  EXPECT_EQ(topo->cpu_node[31], -1);
  EXPECT_EQ(topo->cpu_node[17], 4);
  // The firmware table is kept as is, not symmetrised.
  EXPECT_EQ(topo->nodes[0].distances[7], 32);
  EXPECT_EQ(topo->nodes[7].distances[0], 30);
  EXPECT_EQ(topo->nodes[1].distances[2], 12);
  EXPECT_EQ(topo->nodes[5].mem_free_bytes, 13 * kGiB);
}

TEST(TopologyTest, MissingRootFails) {
  auto topo = ReadTopology("/nonexistent/locus");
  ASSERT_FALSE(topo.ok());
  EXPECT_THAT(std::string(topo.status().message()),
              HasSubstr("/nonexistent/locus/devices/system/node"));
}

TEST(TopologyTest, BadFilesAreNamedAndTheRestLoads) {
  TempTree tree;
  tree.CopyFixture("numa2");
  const std::string node = "sys/devices/system/node/";
  tree.Write(node + "node0/meminfo",
             "Node 0 MemTotal:  2097152 kB\nNode 0 Mem");
  tree.Write(node + "node1/distance", "20\n");
  tree.Write(node + "node1/cpulist", "2-x\n");
  std::vector<std::string> errors;
  auto topo = ReadTopology(tree.root() + "/sys", &errors);
  ASSERT_TRUE(topo.ok()) << topo.status();
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_THAT(errors[0], HasSubstr(node + "node0/meminfo"));
  EXPECT_THAT(errors[0], HasSubstr("truncated"));
  EXPECT_THAT(errors[1], HasSubstr(node + "node1/cpulist"));
  EXPECT_THAT(errors[2], HasSubstr(node + "node1/distance"));
  ASSERT_EQ(topo->nodes.size(), 2u);
  // What could be read is there; what could not is a safe default.
  EXPECT_THAT(topo->nodes[0].cpus, ElementsAre(0, 1));
  EXPECT_EQ(topo->nodes[0].mem_total_bytes, 0u);
  EXPECT_THAT(topo->nodes[0].distances, ElementsAre(10, 20));
  EXPECT_THAT(topo->nodes[1].cpus, IsEmpty());
  EXPECT_EQ(topo->nodes[1].mem_total_bytes, 2 * kGiB);
  EXPECT_THAT(topo->nodes[1].distances, ElementsAre(20, 10));
  EXPECT_THAT(topo->cpu_node, ElementsAre(0, 0, -1, -1));
}

TEST(TopologyTest, MissingCpuOnlineTakesNodeLists) {
  TempTree tree;
  tree.CopyFixture("numa4");
  tree.Remove("sys/devices/system/cpu/online");
  std::vector<std::string> errors;
  auto topo = ReadTopology(tree.root() + "/sys", &errors);
  ASSERT_TRUE(topo.ok()) << topo.status();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("cpu/online"));
  EXPECT_THAT(topo->nodes[2].cpus, ElementsAre(4, 5));
}

// Found by fuzz_topology: "node00" next to "node0" read as node 0 twice.
// Only the kernel's spelling of a node directory is a node.
TEST(TopologyTest, NodeDirectoryWithLeadingZeroIsNotANode) {
  TempTree tree;
  tree.CopyFixture("numa2");
  tree.Write("sys/devices/system/node/node00/cpulist", "0-1\n");
  tree.Write("sys/devices/system/node/node01/cpulist", "2-3\n");
  std::vector<std::string> errors;
  auto topo = ReadTopology(tree.root() + "/sys", &errors);
  ASSERT_TRUE(topo.ok()) << topo.status();
  ASSERT_EQ(topo->nodes.size(), 2u);
  EXPECT_EQ(topo->nodes[0].id, 0);
  EXPECT_EQ(topo->nodes[1].id, 1);
}

TEST(TopologyTest, MemoryTiers) {
  std::vector<std::string> errors;
  auto topo = ReadTopology(Sys("tiered3"), &errors);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_THAT(errors, IsEmpty());
  ASSERT_EQ(topo->nodes.size(), 3u);
  EXPECT_EQ(topo->nodes[0].tier, 4);
  EXPECT_EQ(topo->nodes[1].tier, 4);
  EXPECT_EQ(topo->nodes[2].tier, 6);
  EXPECT_THAT(topo->nodes[2].cpus, IsEmpty());
}

TEST(TopologyTest, NoMemoryTieringMeansUnknownTiers) {
  std::vector<std::string> errors;
  auto topo = ReadTopology(Sys("numa4"), &errors);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_THAT(errors, IsEmpty());
  for (const Node& node : topo->nodes) EXPECT_EQ(node.tier, -1) << node.id;
}

TEST(TopologyTest, MalformedNodelistIsNamedAndItsNodesStayUnknown) {
  TempTree tree;
  tree.CopyFixture("tiered3");
  const std::string tiers = "sys/devices/virtual/memory_tiering/";
  tree.Write(tiers + "memory_tier6/nodelist", "2-\n");
  std::vector<std::string> errors;
  auto topo = ReadTopology(tree.root() + "/sys", &errors);
  ASSERT_TRUE(topo.ok()) << topo.status();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr(tiers + "memory_tier6/nodelist"));
  EXPECT_EQ(topo->nodes[0].tier, 4);
  EXPECT_EQ(topo->nodes[2].tier, -1);
}

TEST(TopologyTest, NodeInTwoTiersKeepsTheFirst) {
  TempTree tree;
  tree.CopyFixture("tiered3");
  const std::string tiers = "sys/devices/virtual/memory_tiering/";
  tree.Write(tiers + "memory_tier6/nodelist", "1-2\n");
  // Not a tier: only the kernel's spelling memory_tierN is.
  tree.Write(tiers + "memory_tier06/nodelist", "0\n");
  std::vector<std::string> errors;
  auto topo = ReadTopology(tree.root() + "/sys", &errors);
  ASSERT_TRUE(topo.ok()) << topo.status();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("node 1 also in memory_tier4"));
  EXPECT_EQ(topo->nodes[0].tier, 4);
  EXPECT_EQ(topo->nodes[1].tier, 4);
  EXPECT_EQ(topo->nodes[2].tier, 6);
}

TEST(TopologyTest, ThisHost) {
  auto topo = ReadTopology("/sys");
  ASSERT_TRUE(topo.ok()) << topo.status();
  ASSERT_FALSE(topo->nodes.empty());
  size_t cpus = 0;
  for (const Node& node : topo->nodes) {
    cpus += node.cpus.size();
    EXPECT_GT(node.mem_total_bytes, 0u);
    EXPECT_EQ(node.distances.size(), topo->nodes.size());
  }
  EXPECT_GT(cpus, 0u);
}

}  // namespace
}  // namespace locus
