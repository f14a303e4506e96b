// Each target's cgroup cpuset, read from fixture cgroup v1 and v2 trees
// (tests/fixtures/cgroup_v{1,2}), and the containers the kubelet places.
#include "agent/host/cgroup_cpuset.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>

#include "agent/host/host_model.h"
#include "agent/host/kubelet.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<Target> Targets(std::initializer_list<int32_t> pids) {
  std::vector<Target> targets;
  for (int32_t pid : pids) {
    Target target;
    target.pid = pid;
    targets.push_back(target);
  }
  return targets;
}

TEST(CpusetCgroupOfTest, PrefersTheV1CpusetLineOverTheUnifiedOne) {
  CpusetCgroup v2 = CpusetCgroupOf("0::/system.slice/nginx.service\n");
  EXPECT_EQ(v2.version, 2);
  EXPECT_EQ(v2.path, "/system.slice/nginx.service");
  CpusetCgroup v1 = CpusetCgroupOf(
      "1:name=systemd:/a\n7:cpu,cpuset:/pinned\n0::/system.slice/x\n");
  EXPECT_EQ(v1.version, 1);
  EXPECT_EQ(v1.path, "/pinned");
  EXPECT_EQ(CpusetCgroupOf("1:name=systemd:/a\n").path, "");
}

class CgroupV2Test : public ::testing::Test {
 protected:
  void SetUp() override { tree_.CopyFixture("cgroup_v2"); }
  std::string Cgroupfs() const { return tree_.root() + "/sys/fs/cgroup"; }
  std::string Proc() const { return tree_.root() + "/proc"; }
  TempTree tree_;
};

TEST_F(CgroupV2Test, ReadsEachTargetsEffectiveCpuset) {
  CgroupCpusetReader reader(Cgroupfs());
  std::vector<Target> targets = Targets({201, 202, 203});
  std::vector<std::string> errors;
  reader.Fill(Proc(), targets, &errors);
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_EQ(targets[0].cgroup->path, "/system.slice/nginx.service");
  EXPECT_THAT(targets[0].cgroup->cpus, ElementsAre(4, 5, 6, 7));
  EXPECT_THAT(targets[0].cgroup->mems, ElementsAre(1));
  // No cpuset controller on its way down: the root's cpuset holds it.
  EXPECT_THAT(targets[1].cgroup->cpus, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_THAT(targets[1].cgroup->mems, ElementsAre(0, 1));
  EXPECT_THAT(targets[2].cgroup->mems, ElementsAre(0));
}

TEST_F(CgroupV2Test, FollowsAChangeAtTheNextScan) {
  CgroupCpusetReader reader(Cgroupfs());
  std::vector<Target> targets = Targets({201});
  std::vector<std::string> errors;
  reader.Fill(Proc(), targets, &errors);
  ASSERT_THAT(targets[0].cgroup->mems, ElementsAre(1));
  // The pod moved from node 1 to node 0.
  tree_.Write("sys/fs/cgroup/system.slice/nginx.service/cpuset.cpus.effective",
              "0-3\n");
  tree_.Write("sys/fs/cgroup/system.slice/nginx.service/cpuset.mems.effective",
              "0\n");
  targets = Targets({201});
  reader.Fill(Proc(), targets, &errors);
  EXPECT_THAT(targets[0].cgroup->cpus, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(targets[0].cgroup->mems, ElementsAre(0));
  EXPECT_THAT(errors, IsEmpty());
}

TEST_F(CgroupV2Test, ACgroupRemovedWhileReadConstrainsNothingAndIsReported) {
  std::filesystem::remove_all(Cgroupfs() + "/system.slice/nginx.service");
  CgroupCpusetReader reader(Cgroupfs());
  // 201 and 204 share the cgroup: read (and reported) once.
  std::vector<Target> targets = Targets({201, 204, 203});
  std::vector<std::string> errors;
  reader.Fill(Proc(), targets, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("system.slice/nginx.service"));
  EXPECT_EQ(targets[0].cgroup->path, "/system.slice/nginx.service");
  EXPECT_THAT(targets[0].cgroup->cpus, IsEmpty());
  EXPECT_THAT(targets[1].cgroup->mems, IsEmpty());
  EXPECT_THAT(targets[2].cgroup->mems, ElementsAre(0)) << "the others load";
}

TEST_F(CgroupV2Test, AFileRemovedWhileReadIsReported) {
  // The directory outlives its files for an instant when rmdir races.
  tree_.Remove(
      "sys/fs/cgroup/system.slice/nginx.service/cpuset.mems.effective");
  CgroupCpusetReader reader(Cgroupfs());
  std::vector<Target> targets = Targets({201});
  std::vector<std::string> errors;
  reader.Fill(Proc(), targets, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("cpuset.mems.effective"));
  EXPECT_THAT(targets[0].cgroup->cpus, IsEmpty());
}

TEST_F(CgroupV2Test, ABadCpusetIsReportedWithItsFile) {
  tree_.Write("sys/fs/cgroup/system.slice/nginx.service/cpuset.cpus.effective",
              "4-x\n");
  CgroupCpusetReader reader(Cgroupfs());
  std::vector<Target> targets = Targets({201});
  std::vector<std::string> errors;
  reader.Fill(Proc(), targets, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("nginx.service/cpuset.cpus.effective: "));
  EXPECT_THAT(targets[0].cgroup->cpus, IsEmpty());
}

TEST_F(CgroupV2Test, NoCgroupsMountedAndExitedProcessesAreQuiet) {
  CgroupCpusetReader reader(tree_.root() + "/nowhere");
  std::vector<Target> targets = Targets({201, 999});
  std::vector<std::string> errors;
  reader.Fill(Proc(), targets, &errors);
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_EQ(targets[0].cgroup->cpus, std::vector<int>{});
  EXPECT_EQ(targets[1].cgroup, nullptr);
}

// locusd in a container with hostPID and its own cgroup namespace (the
// DaemonSet), its cgroup four levels deep: /proc shows other cgroups
// relative to its own.
TEST_F(CgroupV2Test, PathsSeenFromACgroupNamespaceAreResolved) {
  tree_.Write("proc/1/cgroup", "0::/../../../..\n");
  tree_.Write("proc/201/cgroup",
              "0::/../../../../system.slice/nginx.service\n");
  tree_.Write("proc/205/cgroup",
              "0::/../../../kubepods-pod0f1e2d3c_aaaa_bbbb_cccc_000000000001."
              "slice/cri-containerd-1111.scope\n");
  tree_.Write("proc/207/cgroup", "0::/../../../nowhere.slice\n");
  CgroupCpusetReader reader(Cgroupfs());
  std::vector<Target> targets = Targets({201, 205, 207});
  std::vector<std::string> errors;
  reader.Fill(Proc(), targets, &errors);
  EXPECT_EQ(targets[0].cgroup->path, "/system.slice/nginx.service");
  EXPECT_THAT(targets[0].cgroup->mems, ElementsAre(1));
  EXPECT_EQ(targets[1].cgroup->path,
            "/kubepods.slice/kubepods-pod0f1e2d3c_aaaa_bbbb_cccc_000000000001."
            "slice/cri-containerd-1111.scope");
  EXPECT_THAT(targets[1].cgroup->cpus, ElementsAre(2, 3));
  EXPECT_EQ(targets[2].cgroup, nullptr);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("pid 207: cgroup /../../../nowhere.slice"));
  // Resolved once, then only checked: a second scan agrees.
  targets = Targets({205});
  errors.clear();
  reader.Fill(Proc(), targets, &errors);
  EXPECT_THAT(targets[0].cgroup->cpus, ElementsAre(2, 3));
  EXPECT_THAT(errors, IsEmpty());
}

TEST(CgroupV1Test, ReadsTheCpusetHierarchy) {
  TempTree tree;
  tree.CopyFixture("cgroup_v1");
  CgroupCpusetReader reader(tree.root() + "/sys/fs/cgroup");
  std::vector<Target> targets = Targets({301, 302});
  std::vector<std::string> errors;
  reader.Fill(tree.root() + "/proc", targets, &errors);
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_EQ(targets[0].cgroup->path, "/pinned");
  EXPECT_THAT(targets[0].cgroup->cpus, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(targets[0].cgroup->mems, ElementsAre(0));
  EXPECT_THAT(targets[1].cgroup->mems, ElementsAre(0, 1));

  std::filesystem::remove_all(tree.root() + "/sys/fs/cgroup/cpuset/pinned");
  targets = Targets({301});
  reader.Fill(tree.root() + "/proc", targets, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("cpuset/pinned"));
  EXPECT_THAT(targets[0].cgroup->cpus, IsEmpty());
}

TEST(PodUidOfCgroupTest, BothCgroupDrivers) {
  EXPECT_EQ(PodUidOfCgroup("/kubepods.slice/kubepods-burstable.slice/"
                           "kubepods-burstable-pod12ab_34cd.slice/"
                           "cri-containerd-ff.scope"),
            "12ab-34cd");
  EXPECT_EQ(PodUidOfCgroup("/kubepods.slice/kubepods-pod12ab_34cd.slice/x"),
            "12ab-34cd");
  EXPECT_EQ(PodUidOfCgroup("/kubepods/besteffort/pod12ab-34cd/0123"),
            "12ab-34cd");
  EXPECT_EQ(PodUidOfCgroup("/system.slice/pod-manager.service"), "");
  EXPECT_EQ(PodUidOfCgroup("/kubepods.slice"), "");
}

class KubeletTest : public CgroupV2Test {
 protected:
  std::vector<Target> Read(std::vector<std::string>* errors) {
    std::vector<Target> targets = Targets({205, 206, 201});
    CgroupCpusetReader(Cgroupfs()).Fill(Proc(), targets, errors);
    KubeletWatch(tree_.root() + "/var/lib/kubelet").Fill(targets, errors);
    return targets;
  }
};

TEST_F(KubeletTest, ExclusiveCpusOfTheStaticCpuManagerArePlacedByTheKubelet) {
  std::vector<std::string> errors;
  std::vector<Target> targets = Read(&errors);
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_EQ(targets[0].cgroup->placed_by,
            "the kubelet: static CPU manager, exclusive cpus 2-3, Topology "
            "Manager single-numa-node");
  EXPECT_EQ(targets[1].cgroup->placed_by, "") << "same pod, shared pool";
  EXPECT_EQ(targets[2].cgroup->placed_by, "") << "not a pod";
}

TEST_F(KubeletTest, WithoutTheStaticPolicyNothingIsPlaced) {
  tree_.Write("var/lib/kubelet/cpu_manager_state",
              R"({"policyName":"none","defaultCpuSet":"","checksum":1})");
  std::vector<std::string> errors;
  EXPECT_EQ(Read(&errors)[0].cgroup->placed_by, "");
  EXPECT_THAT(errors, IsEmpty());
  tree_.Remove("var/lib/kubelet/cpu_manager_state");
  EXPECT_EQ(Read(&errors)[0].cgroup->placed_by, "");
  EXPECT_THAT(errors, IsEmpty()) << "no CPU manager state: no kubelet here";
}

TEST_F(KubeletTest, AMalformedStateIsReportedAndPlacesNothing) {
  tree_.Write("var/lib/kubelet/cpu_manager_state",
              R"({"policyName":"static","entries":{"p":{"c":"3-1"}}})");
  std::vector<std::string> errors;
  EXPECT_EQ(Read(&errors)[0].cgroup->placed_by, "");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("cpu_manager_state: entries.p.c: "));
  tree_.Write("var/lib/kubelet/cpu_manager_state", "{not json");
  errors.clear();
  Read(&errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0],
              HasSubstr("cpu_manager_state: not the kubelet's JSON"));
}

TEST(HostModelCpusetTest, RefreshPutsTheCpusetInTheSnapshot) {
  TempTree tree;
  tree.CopyFixture("numa2");
  // numa2's nginx runs in /system.slice/nginx.service.
  tree.Write("sys/fs/cgroup/cpuset.cpus.effective", "0-7\n");
  tree.Write("sys/fs/cgroup/cpuset.mems.effective", "0-1\n");
  tree.Write("sys/fs/cgroup/system.slice/nginx.service/cpuset.cpus.effective",
             "4-7\n");
  tree.Write("sys/fs/cgroup/system.slice/nginx.service/cpuset.mems.effective",
             "1\n");
  HostModelOptions options;
  options.paths = {tree.root() + "/sys", tree.root() + "/proc"};
  options.targets.read_numa_maps = false;
  options.read_irqs = false;
  options.kubelet_root = tree.root() + "/var/lib/kubelet";
  HostModel model(options);
  Snapshot snapshot;
  std::vector<std::string> errors;
  ASSERT_TRUE(model.Refresh(&snapshot, &errors).ok());
  ASSERT_FALSE(snapshot.targets.empty());
  for (const Target& target : snapshot.targets) {
    EXPECT_THAT(target.cgroup->cpus, ElementsAre(4, 5, 6, 7)) << target.pid;
    EXPECT_THAT(target.cgroup->mems, ElementsAre(1)) << target.pid;
  }
}

// A cpuset moved to node 0 while the thread list is reused from an earlier
// scan: the threads are shown where the kernel now lets them run.
TEST(HostModelCpusetTest, ThreadsFollowACpusetChangeBeforeTheirListIsReread) {
  TempTree tree;
  tree.CopyFixture("numa2");
  const std::string dir = "sys/fs/cgroup/system.slice/nginx.service/";
  tree.Write(dir + "cpuset.cpus.effective", "4-7\n");
  tree.Write(dir + "cpuset.mems.effective", "1\n");
  HostModelOptions options;
  options.paths = {tree.root() + "/sys", tree.root() + "/proc"};
  options.targets.read_numa_maps = false;
  options.targets.read_thread_cpu = false;
  options.targets.refresh_every = 100;
  options.targets.read_affinity = [](int32_t, std::vector<int>* cpus) {
    *cpus = {4, 5, 6, 7};
    return 0;
  };
  options.read_irqs = false;
  HostModel model(options);
  Snapshot snapshot;
  std::vector<std::string> errors;
  ASSERT_TRUE(model.Refresh(&snapshot, &errors).ok());
  ASSERT_FALSE(snapshot.targets.empty());
  ASSERT_THAT(snapshot.targets[0].threads[0].allowed_cpus,
              ElementsAre(4, 5, 6, 7));
  tree.Write(dir + "cpuset.cpus.effective", "0-3\n");
  tree.Write(dir + "cpuset.mems.effective", "0\n");
  ASSERT_TRUE(model.Refresh(&snapshot, &errors).ok());
  for (const Target& target : snapshot.targets) {
    for (const ThreadSample& thread : target.threads) {
      EXPECT_THAT(thread.allowed_cpus, ElementsAre(0, 1, 2, 3)) << thread.tid;
    }
  }
}

// In a pod with exclusive CPUs: the kubelet's state is read where init
// sees it (<procfs_root>/1/root/var/lib/kubelet) unless told otherwise.
TEST(HostModelCpusetTest, TheKubeletsStateIsReadThroughInitsRoot) {
  TempTree tree;
  tree.CopyFixture("numa2");
  const std::string cgroup =
      "/kubepods.slice/kubepods-pod0f1e_22.slice/cri-containerd-1.scope";
  tree.Write("sys/fs/cgroup" + cgroup + "/cpuset.cpus.effective", "6-7\n");
  tree.Write("sys/fs/cgroup" + cgroup + "/cpuset.mems.effective", "1\n");
  for (int pid = 100; pid <= 104; ++pid) {
    tree.Write("proc/" + std::to_string(pid) + "/cgroup", "0::" + cgroup);
  }
  tree.Write("proc/1/root/var/lib/kubelet/cpu_manager_state",
             R"({"policyName":"static","entries":{"0f1e-22":{"web":"6-7"}}})");
  HostModelOptions options;
  options.paths = {tree.root() + "/sys", tree.root() + "/proc"};
  options.targets.read_numa_maps = false;
  options.read_irqs = false;
  HostModel model(options);
  Snapshot snapshot;
  std::vector<std::string> errors;
  ASSERT_TRUE(model.Refresh(&snapshot, &errors).ok());
  ASSERT_FALSE(snapshot.targets.empty());
  for (const Target& target : snapshot.targets) {
    EXPECT_EQ(target.cgroup->placed_by,
              "the kubelet: static CPU manager, exclusive cpus 6-7")
        << target.pid;
  }
}

// A pod's tree of numa2 whose kubelet state a test replaces.
class HostilePathsTest : public ::testing::Test {
 protected:
  static constexpr char kCgroup[] =
      "/kubepods.slice/kubepods-pod0f1e_22.slice/cri-containerd-1.scope";
  static constexpr char kState[] =
      "proc/1/root/var/lib/kubelet/cpu_manager_state";
  void SetUp() override {
    tree_.CopyFixture("numa2");
    const std::string dir = std::string("sys/fs/cgroup") + kCgroup;
    tree_.Write(dir + "/cpuset.cpus.effective", "6-7\n");
    tree_.Write(dir + "/cpuset.mems.effective", "1\n");
    for (int pid = 100; pid <= 104; ++pid) {
      tree_.Write("proc/" + std::to_string(pid) + "/cgroup",
                  std::string("0::") + kCgroup);
    }
  }
  // Replaces `relative` with a FIFO no one writes to.
  void MakeFifo(const std::string& relative) {
    tree_.Write(relative, "");  // its directories
    tree_.Remove(relative);
    ASSERT_EQ(mkfifo((tree_.root() + "/" + relative).c_str(), 0600), 0);
  }
  // The first tick's scan, on another thread: one that blocks fails the
  // test (every FIFO of the tree then gets a writer so that it can end).
  std::vector<std::string> Scan(Snapshot* snapshot) {
    HostModelOptions options;
    options.paths = {tree_.root() + "/sys", tree_.root() + "/proc"};
    options.targets.read_numa_maps = false;
    options.read_irqs = false;
    HostModel model(options);
    std::vector<std::string> errors;
    auto scan = std::async(std::launch::async,
                           [&] { return model.Refresh(snapshot, &errors); });
    if (scan.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      ADD_FAILURE() << "the scan blocked on a FIFO";
      for (const auto& entry :
           std::filesystem::recursive_directory_iterator(tree_.root())) {
        if (entry.is_fifo()) {
          close(open(entry.path().c_str(), O_WRONLY | O_NONBLOCK));
        }
      }
    }
    EXPECT_TRUE(scan.get().ok());
    return errors;
  }
  TempTree tree_;
};

TEST_F(HostilePathsTest, AFifoAsTheKubeletsStateLetsTheFirstTickComplete) {
  MakeFifo(kState);
  Snapshot snapshot;
  std::vector<std::string> errors = Scan(&snapshot);
  EXPECT_THAT(errors, Contains(tree_.root() + "/" + kState +
                               ": is a FIFO, not a regular file"));
  ASSERT_FALSE(snapshot.targets.empty());
  EXPECT_EQ(snapshot.targets[0].cgroup->placed_by, "") << "nothing read";
}

TEST_F(HostilePathsTest, AFifoAsACpusetFileLetsTheFirstTickComplete) {
  const std::string file =
      std::string("sys/fs/cgroup") + kCgroup + "/cpuset.cpus.effective";
  MakeFifo(file);
  Snapshot snapshot;
  std::vector<std::string> errors = Scan(&snapshot);
  EXPECT_THAT(errors, Contains(HasSubstr(tree_.root() + "/" + file +
                                         ": is a FIFO, not a regular file")));
}

// 200 MiB that cost no disk: refused from its size, not read into memory.
TEST_F(HostilePathsTest, AHugeSparseKubeletStateIsRefusedUnread) {
  tree_.Write(kState, "");
  ASSERT_EQ(truncate((tree_.root() + "/" + kState).c_str(), 200ll << 20), 0);
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  Snapshot snapshot;
  std::vector<std::string> errors = Scan(&snapshot);
  getrusage(RUSAGE_SELF, &after);
  EXPECT_THAT(errors, Contains(tree_.root() + "/" + kState +
                               ": larger than 1048576 bytes (209715200 or "
                               "more)"));
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 16 << 10) << "KiB";
}

}  // namespace
}  // namespace locus
