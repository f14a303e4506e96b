#include "agent/host/numa_maps.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Topology TwoNodes() {
  Topology topology;
  topology.nodes.resize(2);
  topology.nodes[0].id = 0;
  topology.nodes[1].id = 1;
  return topology;
}

TEST(NumaMapsTest, SumsPagesPerNode) {
  auto pages = ParseNumaMaps(
      "55d0c8a00000 default file=/usr/sbin/nginx mapped=200 N0=200 "
      "kernelpagesize_kB=4\n"
      "55d0c9000000 default heap anon=1000 dirty=1000 N0=300 N1=700 "
      "kernelpagesize_kB=4\n"
      "7f0000000000 default anon=1 dirty=1 N1=1 kernelpagesize_kB=2048\n"
      "7f1000000000 bind:1 anon=0 kernelpagesize_kB=4\n",
      TwoNodes(), 4096);
  ASSERT_TRUE(pages.ok()) << pages.status();
  // The 2 MiB huge page counts as 512 base pages.
  EXPECT_THAT(*pages, ElementsAre(500, 700 + 512));
}

TEST(NumaMapsTest, UnknownNodeAndGarbage) {
  auto pages = ParseNumaMaps("1000 default N5=3 kernelpagesize_kB=4\n",
                             TwoNodes(), 4096);
  ASSERT_FALSE(pages.ok());
  EXPECT_THAT(std::string(pages.status().message()), HasSubstr("node 5"));
  EXPECT_FALSE(
      ParseNumaMaps("1000 default N0=x kernelpagesize_kB=4\n", TwoNodes(), 4096)
          .ok());
}

TEST(NumaMapsTest, EmptyIsZero) {
  auto pages = ParseNumaMaps("", TwoNodes(), 4096);
  ASSERT_TRUE(pages.ok());
  EXPECT_THAT(*pages, ElementsAre(0, 0));
}

}  // namespace
}  // namespace locus
