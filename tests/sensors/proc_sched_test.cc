#include "agent/sensors/proc_sched.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/common/test_paths.h"

namespace locus {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(LOCUS_SOURCE_DIR) + "/tests/sensors/testdata/" +
                   name);
  EXPECT_TRUE(in) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ProcSchedTest, Captured618SingleNode) {
  absl::StatusOr<ProcSched> p =
      ParseProcSched(Fixture("proc_sched_6.18_captured.txt"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->comm, "cat");
  EXPECT_GT(p->pid, 0);
  EXPECT_EQ(p->nr_migrations, 0);
  EXPECT_EQ(p->numa_preferred_nid, -1);
  EXPECT_EQ(p->total_numa_faults, 0);
  EXPECT_EQ(p->current_node, 0);
  ASSERT_EQ(p->numa_faults.size(), 1u);
  EXPECT_EQ(p->numa_faults[0].node, 0);
  EXPECT_EQ(p->numa_faults[0].task_private, 0u);
  EXPECT_EQ(p->fields.count("se.slice"), 1u);  // 6.18 prints it
}

// 6.1 and 6.12 differ in the lines around the ones the parser needs
// (util_est split, se.slice, ext.enabled); the NUMA part must read the same.
class ReconstructedTest : public testing::TestWithParam<const char*> {};

TEST_P(ReconstructedTest, TwoNodeFaults) {
  absl::StatusOr<ProcSched> p = ParseProcSched(Fixture(GetParam()));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->comm, "nginx");
  EXPECT_EQ(p->pid, 4242);
  EXPECT_EQ(p->nr_migrations, 318);
  EXPECT_EQ(p->numa_preferred_nid, 1);
  EXPECT_EQ(p->total_numa_faults, 2114);
  EXPECT_EQ(p->current_node, 1);
  ASSERT_EQ(p->numa_faults.size(), 2u);
  EXPECT_EQ(p->numa_faults[0].node, 0);
  EXPECT_EQ(p->numa_faults[0].task_private, 120u);
  EXPECT_EQ(p->numa_faults[0].task_shared, 4u);
  EXPECT_EQ(p->numa_faults[1].node, 1);
  EXPECT_EQ(p->numa_faults[1].task_private, 1980u);
  EXPECT_EQ(p->numa_faults[1].task_shared, 10u);
  EXPECT_EQ(p->numa_faults[1].group_private, 0u);
  EXPECT_EQ(p->fields.at("se.sum_exec_runtime"), "40211.100200");
}

INSTANTIATE_TEST_SUITE_P(Kernels, ReconstructedTest,
                         testing::Values("proc_sched_6.1_reconstructed.txt",
                                         "proc_sched_6.12_reconstructed.txt"));

TEST(ProcSchedTest, VersionSpecificLinesAreKept) {
  absl::StatusOr<ProcSched> v61 =
      ParseProcSched(Fixture("proc_sched_6.1_reconstructed.txt"));
  absl::StatusOr<ProcSched> v612 =
      ParseProcSched(Fixture("proc_sched_6.12_reconstructed.txt"));
  ASSERT_TRUE(v61.ok() && v612.ok());
  EXPECT_EQ(v61->fields.count("se.avg.util_est.ewma"), 1u);
  EXPECT_EQ(v61->fields.count("ext.enabled"), 0u);
  EXPECT_EQ(v612->fields.count("se.avg.util_est"), 1u);
  EXPECT_EQ(v612->fields.count("ext.enabled"), 1u);
}

TEST(ProcSchedTest, CommWithParenthesesAndSpaces) {
  absl::StatusOr<ProcSched> p =
      ParseProcSched("my (odd) name (77, #threads: 3)\n---\n");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->comm, "my (odd) name");
  EXPECT_EQ(p->pid, 77);
  EXPECT_EQ(p->nr_migrations, -1);  // absent, not zero
  EXPECT_TRUE(p->numa_faults.empty());
}

TEST(ProcSchedTest, GarbageIsAnErrorNotACrash) {
  EXPECT_FALSE(ParseProcSched("").ok());
  EXPECT_FALSE(ParseProcSched("no header here\nse.nr_migrations : 3\n").ok());
  absl::StatusOr<ProcSched> p = ParseProcSched(
      "x (1, #threads: 1)\nnuma_faults task_private=5\n"
      "numa_faults node=zz\nse.nr_migrations : lots\n");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->numa_faults.empty());  // no parsable node= → skipped
  EXPECT_EQ(p->nr_migrations, -1);
}

TEST(ProcSchedTest, ReadAllAndNumaBalancingFromFixtureTree) {
  namespace fs = std::filesystem;
  fs::path root = fs::path(testing::TempDir()) / "procfs_fixture";
  fs::remove_all(root);
  fs::create_directories(root / "4242/task/4242");
  fs::create_directories(root / "4242/task/4243");  // no sched file: skipped
  fs::create_directories(root / "sys/kernel");
  fs::copy_file(fs::path(LOCUS_SOURCE_DIR) /
                    "tests/sensors/testdata/proc_sched_6.1_reconstructed.txt",
                root / "4242/task/4242/sched");
  std::ofstream(root / "sys/kernel/numa_balancing") << "1\n";
  uint64_t skipped = 0;
  std::vector<ProcTaskSched> all = ReadAllProcSched(root.string(), &skipped);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].pid, 4242);
  EXPECT_EQ(all[0].tid, 4242);
  EXPECT_EQ(all[0].sched.numa_faults.size(), 2u);
  EXPECT_EQ(skipped, 1u);
  EXPECT_TRUE(ReadNumaBalancing(root.string()));
  std::ofstream(root / "sys/kernel/numa_balancing") << "0\n";
  EXPECT_FALSE(ReadNumaBalancing(root.string()));
  EXPECT_FALSE(ReadNumaBalancing((root / "absent").string()));
}

}  // namespace
}  // namespace locus
