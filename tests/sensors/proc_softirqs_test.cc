#include "agent/sensors/proc_softirqs.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/test_paths.h"

namespace locus {
namespace {

using ::testing::HasSubstr;

std::string Captured() {
  std::ifstream in(std::string(LOCUS_SOURCE_DIR) +
                   "/tests/sensors/testdata/proc_softirqs_6.18_captured.txt");
  EXPECT_TRUE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ProcSoftirqsTest, Captured618) {
  absl::StatusOr<std::vector<SoftirqCounts>> c = ParseProcSoftirqs(Captured());
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->size(), 2u);
  EXPECT_EQ((*c)[0][kSoftirqNetRx], 91648348u);
  EXPECT_EQ((*c)[1][kSoftirqNetRx], 85265898u);
  EXPECT_EQ((*c)[1][4], 1344378u);  // BLOCK
  EXPECT_EQ((*c)[0][9], 3414648u);  // RCU, the last vector
}

TEST(ProcSoftirqsTest, CpusTheHeaderSkipsReadZero) {
  absl::StatusOr<std::vector<SoftirqCounts>> c = ParseProcSoftirqs(
      "       CPU0       CPU2\n"
      "      NET_RX:  5  7\n"
      "   NEW_VEC:  1  1\n");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->size(), 3u);
  EXPECT_EQ((*c)[0][kSoftirqNetRx], 5u);
  EXPECT_EQ((*c)[1][kSoftirqNetRx], 0u);
  EXPECT_EQ((*c)[2][kSoftirqNetRx], 7u);
}

TEST(ProcSoftirqsTest, BadTextNamesTheLine) {
  struct Case {
    const char* text;
    const char* error;
  } cases[] = {
      {"", "empty"},
      {"  CPU0  CPUx\n", "line 1: 'x'"},
      {"  CPU0  CPU1\n  NET_RX:  5\n", "line 2 (NET_RX): 1 counts for 2 CPUs"},
      {"  CPU0\n  NET_RX:  -5\n", "line 2 (NET_RX): bad count '-5'"},
      {"  CPU0\n  NET_RX  5\n", "line 2: no 'NAME:'"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<SoftirqCounts>> r = ParseProcSoftirqs(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_THAT(r.status().message(), HasSubstr(c.error)) << c.text;
  }
}

}  // namespace
}  // namespace locus
