// The real ThreadOps/PageOps readers pointed at fixture trees: the cpuset
// lookup for cgroup v2, v1 and hybrid layouts, start time, and the maps
// filter. (The syscalls themselves are exercised in act_privileged_test.)
#include "agent/act/kernel_ops.h"

#include <cerrno>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;

class KernelThreadOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Write("sys/devices/system/cpu/online", "0-7\n");
    tree_.Write("proc/10/task/10/stat",
                "10 (nginx) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4242 0 0 "
                "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
                "0\n");
  }
  std::unique_ptr<ThreadOps> Ops() {
    return MakeKernelThreadOps(tree_.root() + "/proc", tree_.root() + "/cgroup",
                               tree_.root() + "/sys");
  }
  TempTree tree_;
};

TEST_F(KernelThreadOpsTest, StartTime) {
  uint64_t start = 0;
  EXPECT_EQ(Ops()->StartTime(10, &start), 0);
  EXPECT_EQ(start, 4242u);
  EXPECT_EQ(Ops()->StartTime(11, &start), ESRCH);
  tree_.Write("proc/12/task/12/stat", "12 (x) S 1\n");
  EXPECT_EQ(Ops()->StartTime(12, &start), EIO);
}

TEST_F(KernelThreadOpsTest, CgroupV2WalksUpToTheNearestCpuset) {
  tree_.Write("proc/10/cgroup", "0::/system.slice/nginx.service\n");
  tree_.Write("cgroup/cpuset.cpus.effective", "0-7\n");
  tree_.Write("cgroup/system.slice/cpuset.cpus.effective", "2-5\n");
  tree_.Write("cgroup/system.slice/nginx.service/cgroup.procs", "10\n");
  std::vector<int> cpus;
  ASSERT_EQ(Ops()->CpusetCpus(10, &cpus), 0);
  EXPECT_THAT(cpus, ElementsAre(2, 3, 4, 5));
  tree_.Write("cgroup/system.slice/nginx.service/cpuset.cpus.effective", "4\n");
  ASSERT_EQ(Ops()->CpusetCpus(10, &cpus), 0);
  EXPECT_THAT(cpus, ElementsAre(4));
}

TEST_F(KernelThreadOpsTest, CgroupV1Cpuset) {
  // Hybrid: v1 cpuset line first, as /proc/PID/cgroup lists it.
  tree_.Write("proc/10/cgroup",
              "3:cpuset:/pinned\n1:name=systemd:/system.slice/x.service\n"
              "0::/system.slice/x.service\n");
  tree_.Write("cgroup/cpuset/cpuset.effective_cpus", "0-7\n");
  tree_.Write("cgroup/cpuset/pinned/cpuset.effective_cpus", "6-7\n");
  std::vector<int> cpus;
  ASSERT_EQ(Ops()->CpusetCpus(10, &cpus), 0);
  EXPECT_THAT(cpus, ElementsAre(6, 7));
}

TEST_F(KernelThreadOpsTest, NoCpusetMeansOnlineCpus) {
  tree_.Write("proc/10/cgroup", "0::/\n");
  std::vector<int> cpus;
  ASSERT_EQ(Ops()->CpusetCpus(10, &cpus), 0);
  EXPECT_THAT(cpus, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_EQ(Ops()->CpusetCpus(11, &cpus), ESRCH);
}

TEST(KernelPageOpsTest, RangesArePrivateWritableOnly) {
  TempTree tree;
  tree.Write("proc/7/maps",
             "55d0c8a00000-55d0c8a20000 r--p 00000000 08:01 1 /usr/sbin/nginx\n"
             "55d0c8c00000-55d0c8c10000 rw-p 00020000 08:01 1 /usr/sbin/nginx\n"
             "55d0c9000000-55d0c9100000 rw-p 00000000 00:00 0 [heap]\n"
             "7f0000000000-7f0000200000 rw-s 00000000 00:01 5 /dev/shm/x\n"
             "7f1000000000-7f1000001000 ---p 00000000 00:00 0\n"
             "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]\n"
             "7ffd00100000-7ffd00102000 r--p 00000000 00:00 0 [vvar]\n"
             "garbage line\n");
  auto ops = MakeKernelPageOps(tree.root() + "/proc");
  std::vector<MemRange> ranges;
  ASSERT_EQ(ops->Ranges(7, &ranges), 0);
  ASSERT_EQ(ranges.size(), 3u);
  // With numa_maps: mappings without resident pages, and huge ones, go.
  tree.Write("proc/7/maps",
             "55d0c8c00000-55d0c8c10000 rw-p 00020000 08:01 1 /usr/sbin/nginx\n"
             "55d0c9000000-55d0c9100000 rw-p 00000000 00:00 0 [heap]\n"
             "600000000000-640000000000 rw-p 00000000 00:00 0\n"
             "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]\n");
  tree.Write("proc/7/numa_maps",
             "55d0c8c00000 default file=/usr/sbin/nginx anon=2 N0=2\n"
             "55d0c9000000 default heap\n"
             "600000000000 default anon=5 N0=5\n"
             "7ffd00000000 default stack anon=3 N1=3\n");
  ASSERT_EQ(ops->Ranges(7, &ranges), 0);
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].start, 0x55d0c8c00000u);
  EXPECT_EQ(ranges[1].start, 0x7ffd00000000u);
  tree.Remove("proc/7/numa_maps");
  tree.Write("proc/7/maps",
             "55d0c8c00000-55d0c8c10000 rw-p 00020000 08:01 1 /usr/sbin/nginx\n"
             "55d0c8a00000-55d0c8a20000 r--p 00000000 08:01 1 /usr/sbin/nginx\n"
             "55d0c9000000-55d0c9100000 rw-p 00000000 00:00 0 [heap]\n"
             "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]\n");
  ASSERT_EQ(ops->Ranges(7, &ranges), 0);
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[0].start, 0x55d0c8c00000u);
  EXPECT_EQ(ranges[1].end, 0x55d0c9100000u);
  EXPECT_EQ(ranges[2].start, 0x7ffd00000000u);
  EXPECT_EQ(ops->Ranges(8, &ranges), ESRCH);
}

}  // namespace
}  // namespace locus
