#include "agent/host/targets.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "agent/host/host_model.h"
#include "agent/host/topology.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

std::map<int32_t, Target> ByPid(const std::vector<Target>& targets) {
  std::map<int32_t, Target> out;
  for (const Target& target : targets) out[target.pid] = target;
  return out;
}

class TargetsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    paths_.sysfs_root = FixturePath("numa2/sys");
    paths_.procfs_root = FixturePath("numa2/proc");
    auto topology = ReadTopology(paths_.sysfs_root);
    ASSERT_TRUE(topology.ok());
    topology_ = *topology;
  }
  // One scan with `cache`, by pid; a failed scan is a test failure.
  std::map<int32_t, Target> CachedScan(const HostPaths& paths,
                                       const TargetScanOptions& options,
                                       TargetScanCache* cache,
                                       std::vector<std::string>* errors) {
    auto targets = ScanTargets(paths, options, topology_, errors, cache);
    EXPECT_TRUE(targets.ok());
    return ByPid(targets.ok() ? *targets : std::vector<Target>{});
  }
  HostPaths paths_;
  Topology topology_;
};

TEST_F(TargetsTest, NginxMasterAndWorkers) {
  std::vector<std::string> errors;
  auto targets = ScanTargets(paths_, TargetScanOptions{}, topology_, &errors);
  ASSERT_TRUE(targets.ok()) << targets.status();
  auto by_pid = ByPid(*targets);
  // 103 is draining after a reload, 200/300 are not nginx, 400 is broken.
  ASSERT_EQ(by_pid.size(), 4u);
  EXPECT_EQ(by_pid[100].role, TargetRole::kMaster);
  EXPECT_EQ(by_pid[101].role, TargetRole::kWorker);
  EXPECT_EQ(by_pid[102].role, TargetRole::kWorker);
  EXPECT_EQ(by_pid[104].role, TargetRole::kOther);  // cache manager
  EXPECT_EQ(by_pid[101].comm, "nginx");
  // The broken process is named, and only it is missing.
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("numa2/proc/400/task/400/stat"));
  EXPECT_THAT(errors[0], HasSubstr("truncated"));
}

TEST_F(TargetsTest, ThreadsWithCpuAndAffinity) {
  std::vector<std::string> errors;
  auto targets = ScanTargets(paths_, TargetScanOptions{}, topology_, &errors);
  ASSERT_TRUE(targets.ok());
  auto by_pid = ByPid(*targets);
  ASSERT_EQ(by_pid[102].threads.size(), 2u);
  EXPECT_EQ(by_pid[102].threads[0].tid, 102);
  EXPECT_EQ(by_pid[102].threads[0].cpu, 3);
  EXPECT_EQ(by_pid[102].threads[1].tid, 110);
  EXPECT_EQ(by_pid[102].threads[1].cpu, 2);
  EXPECT_THAT(by_pid[102].threads[1].allowed_cpus, ElementsAre(0, 1, 2, 3));
  ASSERT_EQ(by_pid[101].threads.size(), 1u);
  EXPECT_THAT(by_pid[101].threads[0].allowed_cpus, ElementsAre(0, 1));
}

TEST_F(TargetsTest, WithoutThreadCpuOnlyAffinityIsRead) {
  TargetScanOptions options;
  options.read_thread_cpu = false;  // the sensors know each thread's CPU
  std::vector<std::string> errors;
  auto targets = ScanTargets(paths_, options, topology_, &errors);
  ASSERT_TRUE(targets.ok());
  auto by_pid = ByPid(*targets);
  ASSERT_EQ(by_pid[102].threads.size(), 2u);
  EXPECT_EQ(by_pid[102].threads[1].tid, 110);
  EXPECT_EQ(by_pid[102].threads[1].cpu, -1);
  EXPECT_THAT(by_pid[102].threads[1].allowed_cpus, ElementsAre(0, 1, 2, 3));
}

TEST_F(TargetsTest, AffinityFromTheGivenReader) {
  TargetScanOptions options;
  options.read_affinity = [](int32_t tid, std::vector<int>* cpus) {
    if (tid == 102) return ESRCH;  // exited between listing and reading
    *cpus = {5};
    return 0;
  };
  std::vector<std::string> errors;
  auto targets = ScanTargets(paths_, options, topology_, &errors);
  ASSERT_TRUE(targets.ok());
  auto by_pid = ByPid(*targets);
  ASSERT_EQ(by_pid[102].threads.size(), 1u) << "the gone thread is dropped";
  EXPECT_EQ(by_pid[102].threads[0].tid, 110);
  EXPECT_THAT(by_pid[102].threads[0].allowed_cpus, ElementsAre(5));
  EXPECT_THAT(errors, Not(Contains(HasSubstr("sched_getaffinity"))));
}

TEST_F(TargetsTest, ResidentPagesPerNode) {
  std::vector<std::string> errors;
  auto targets = ScanTargets(paths_, TargetScanOptions{}, topology_, &errors);
  ASSERT_TRUE(targets.ok());
  auto by_pid = ByPid(*targets);
  if (getpagesize() != 4096) GTEST_SKIP() << "fixtures assume 4 KiB pages";
  // 200 file + 300 heap + 3 stack on node 0; 700 heap + one 2 MiB page on 1.
  EXPECT_THAT(by_pid[101].resident_pages, ElementsAre(503, 700 + 512));
  EXPECT_THAT(by_pid[102].resident_pages, ElementsAre(203, 1000 + 512));
}

TEST_F(TargetsTest, OneNodeReadsNoNumaMaps) {
  auto one = ReadTopology(FixturePath("numa1/sys"));
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->nodes.size(), 1u);
  std::vector<std::string> errors;
  auto targets = ScanTargets(paths_, TargetScanOptions{}, *one, &errors);
  ASSERT_TRUE(targets.ok());
  auto by_pid = ByPid(*targets);
  ASSERT_TRUE(by_pid.contains(101));
  EXPECT_THAT(by_pid[101].resident_pages, IsEmpty());
  EXPECT_FALSE(by_pid[101].threads.empty());
}

// Pid 300 (bash in the fixture) execs nginx: its comm and stat say so.
void ExecNginx(TempTree& tree, const std::string& dir) {
  tree.Write(dir + "/comm", "nginx\n");
  tree.Write(dir + "/task/300/stat",
             "300 (nginx) S 1 1 1 0 -1 4194560 100 0 0 0 12 3 0 0 20 0 1 0 "
             "1300 12345678 1234 -1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
             "0 0 0 0 0 0 0\n");
}

// A copy of numa2 that a test may change, scanned with one cache whose
// names the sensors track.
class NamesTest : public TargetsTest {
 protected:
  NamesTest() {
    tree_.CopyFixture("numa2");
    cache_.names_tracked = true;
  }
  HostPaths Paths() const {
    return {tree_.root() + "/sys", tree_.root() + "/proc"};
  }
  bool Selects(int32_t pid) {
    return CachedScan(Paths(), TargetScanOptions{}, &cache_, &errors_)
        .contains(pid);
  }
  TempTree tree_;
  TargetScanCache cache_;
  std::vector<std::string> errors_;
};

TEST_F(NamesTest, CommVerdictsAreReusedUntilTheProcessIsRenamed) {
  EXPECT_FALSE(Selects(300));
  EXPECT_TRUE(cache_.ruled_out.contains(300));
  EXPECT_FALSE(cache_.ruled_out.contains(101));  // a target
  ExecNginx(tree_, "proc/300");
  EXPECT_FALSE(Selects(300)) << "no comm read: nobody said renamed";
  cache_.ruled_out.erase(300);  // as HostModel::NoteRenamed({300}) does
  EXPECT_TRUE(Selects(300));
  EXPECT_FALSE(cache_.ruled_out.contains(300));
}

TEST_F(NamesTest, AReusedPidIsReadAgainWithoutARename) {
  EXPECT_FALSE(Selects(300));
  // Bash exits and a new nginx gets its pid: a new /proc/300 directory. The
  // old one is kept aside so its inode number cannot be reused.
  namespace fs = std::filesystem;
  const fs::path proc = Paths().procfs_root;
  fs::copy(proc / "300", proc / "300.new", fs::copy_options::recursive);
  ExecNginx(tree_, "proc/300.new");
  fs::rename(proc / "300", proc / "300.old");
  fs::rename(proc / "300.new", proc / "300");
  EXPECT_TRUE(Selects(300));
}

TEST_F(NamesTest, UntrackedNamesAreReadEveryScan) {
  cache_.names_tracked = false;
  EXPECT_FALSE(Selects(300));
  ExecNginx(tree_, "proc/300");
  EXPECT_TRUE(Selects(300));
}

TEST(HostModelNamesTest, RenamesAndNewSelectorsAreReadAgain) {
  TempTree tree;
  tree.CopyFixture("numa2");
  HostModelOptions options;
  options.paths = {tree.root() + "/sys", tree.root() + "/proc"};
  HostModel model(options);
  auto has = [&](int32_t pid) {
    Snapshot snapshot;
    std::vector<std::string> errors;
    EXPECT_TRUE(model.Refresh(&snapshot, &errors).ok());
    return std::any_of(snapshot.targets.begin(), snapshot.targets.end(),
                       [&](const Target& t) { return t.pid == pid; });
  };
  EXPECT_FALSE(has(300));
  model.NoteRenamed(std::vector<int32_t>{});  // the sensors track names
  ExecNginx(tree, "proc/300");
  EXPECT_FALSE(has(300)) << "verdict reused";
  model.NoteRenamed(std::vector<int32_t>{300});
  EXPECT_TRUE(has(300));

  TargetScanOptions bash;
  bash.selector.comms = {"bash", "envoy"};
  model.set_targets(bash);
  EXPECT_TRUE(has(200)) << "ruled out by the old selectors only";

  tree.Write("proc/200/comm", "bash\n");  // envoy renamed, unreported...
  model.set_targets(TargetScanOptions{});
  EXPECT_FALSE(has(200));
  model.NoteRenamed(std::nullopt);  // ...but the sensors lost count
  tree.Write("proc/200/comm", "nginx\n");
  tree.Write("proc/200/task/200/stat",
             "200 (nginx) S 1 1 1 0 -1 4194560 100 0 0 0 12 3 0 0 20 0 1 0 "
             "1200 12345678 1234 -1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
             "0 0 0 0 0 0 0\n");
  EXPECT_TRUE(has(200));
}

TEST_F(TargetsTest, OtherSelectors) {
  std::vector<std::string> errors;
  TargetScanOptions options;
  options.selector = TargetSelector{};
  options.selector.systemd_units = {"envoy.service"};
  auto targets = ScanTargets(paths_, options, topology_, &errors);
  ASSERT_TRUE(targets.ok());
  ASSERT_EQ(targets->size(), 1u);
  EXPECT_EQ((*targets)[0].pid, 200);
  EXPECT_EQ((*targets)[0].role, TargetRole::kOther);
  EXPECT_EQ((*targets)[0].threads.size(), 2u);

  options.selector = TargetSelector{};
  options.selector.exe_paths = {"/usr/bin/bash"};
  targets = ScanTargets(paths_, options, topology_, &errors);
  ASSERT_TRUE(targets.ok());
  ASSERT_EQ(targets->size(), 1u);
  EXPECT_EQ((*targets)[0].pid, 300);

  options.selector = TargetSelector{};
  options.selector.cgroup_paths = {"/system.slice/"};
  targets = ScanTargets(paths_, options, topology_, &errors);
  ASSERT_TRUE(targets.ok());
  std::vector<int32_t> pids;
  for (const Target& t : *targets) pids.push_back(t.pid);
  EXPECT_THAT(pids, UnorderedElementsAre(100, 101, 102, 104, 200));

  // Prefix matches whole components only.
  options.selector = TargetSelector{};
  options.selector.cgroup_paths = {"/system.slice/nginx"};
  targets = ScanTargets(paths_, options, topology_, &errors);
  ASSERT_TRUE(targets.ok());
  EXPECT_THAT(*targets, IsEmpty());

  options.selector = TargetSelector{};
  targets = ScanTargets(paths_, options, topology_, &errors);
  ASSERT_TRUE(targets.ok());
  EXPECT_THAT(*targets, IsEmpty());
}

TEST_F(TargetsTest, GenericMasterWorkerFromParentage) {
  std::vector<std::string> errors;
  TargetScanOptions options;
  options.selector.comms = {"nginx", "envoy"};
  options.skip_draining = false;
  auto targets = ScanTargets(paths_, options, topology_, &errors);
  ASSERT_TRUE(targets.ok());
  auto by_pid = ByPid(*targets);
  EXPECT_EQ(by_pid.count(103), 1u);  // kept when asked
  EXPECT_EQ(by_pid[200].role, TargetRole::kOther);
}

// A reload: old workers gone or draining, new ones with new PIDs, picked up
// by the next scan.
TEST_F(TargetsTest, ReloadIsSeenInOneScan) {
  TempTree tree;
  tree.CopyFixture("numa2");
  TargetScanOptions options;
  options.read_numa_maps = false;
  HostPaths paths{tree.root() + "/sys", tree.root() + "/proc"};
  std::vector<std::string> errors;
  auto before = ScanTargets(paths, options, topology_, &errors);
  ASSERT_TRUE(before.ok());
  ASSERT_EQ(ByPid(*before).count(101), 1u);

  std::filesystem::remove_all(tree.root() + "/proc/101");
  std::filesystem::rename(tree.root() + "/proc/102", tree.root() + "/proc/500");
  auto rewrite = [&](const std::string& path, const std::string& from,
                     const std::string& to) {
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    size_t at;
    while ((at = text.find(from)) != std::string::npos) {
      text.replace(at, from.size(), to);
    }
    std::ofstream(path, std::ios::trunc) << text;
  };
  rewrite(tree.root() + "/proc/500/stat", "102 (nginx)", "500 (nginx)");
  std::filesystem::rename(tree.root() + "/proc/500/task/102",
                          tree.root() + "/proc/500/task/500");
  rewrite(tree.root() + "/proc/500/task/500/stat", "102 (nginx)",
          "500 (nginx)");
  tree.Write("proc/102/cmdline",
             std::string("nginx: worker process is shutting down\0", 40));
  for (const char* file : {"proc/102/stat", "proc/102/task/102/stat"}) {
    tree.Write(file,
               "102 (nginx) S 100 100 100 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1102 "
               "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
               "0 0\n");
  }

  auto after = ScanTargets(paths, options, topology_, &errors);
  ASSERT_TRUE(after.ok());
  auto by_pid = ByPid(*after);
  EXPECT_EQ(by_pid.count(101), 0u);
  EXPECT_EQ(by_pid.count(102), 0u);  // draining
  ASSERT_EQ(by_pid.count(500), 1u);
  EXPECT_EQ(by_pid[500].role, TargetRole::kWorker);
  ASSERT_EQ(by_pid[500].threads.size(), 2u);
  EXPECT_EQ(by_pid[500].threads[0].tid, 110);  // ascending by tid
  EXPECT_EQ(by_pid[500].threads[1].tid, 500);
}

// A cached scan reuses a process's threads and numa_maps until they are
// `refresh_every` scans old, its thread count changes, it is marked stale or
// its pid is reused; every other part is read afresh.
TEST_F(TargetsTest, CacheReusesThreadsAndPagesUntilStaleOrOld) {
  if (getpagesize() != 4096) GTEST_SKIP() << "fixtures assume 4 KiB pages";
  TempTree tree;
  tree.CopyFixture("numa2");
  HostPaths paths{tree.root() + "/sys", tree.root() + "/proc"};
  TargetScanOptions options;
  options.read_thread_cpu = false;
  options.refresh_every = 3;
  TargetScanCache cache;
  std::vector<std::string> errors;
  auto scan = [&] { return CachedScan(paths, options, &cache, &errors); };
  auto moved_pages = [&] {  // all of 101's heap moves to node 1
    tree.Write("proc/101/numa_maps",
               "55d0c9000000 default heap anon=1000 dirty=1000 N1=1000 "
               "kernelpagesize_kB=4\n");
  };
  EXPECT_THAT(scan()[101].resident_pages, ElementsAre(503, 1212));
  moved_pages();
  EXPECT_THAT(scan()[101].resident_pages, ElementsAre(503, 1212))
      << "one scan old: reused";
  cache.stale.insert(101);
  EXPECT_THAT(scan()[101].resident_pages, ElementsAre(0, 1000))
      << "stale: read again";
  tree.Write("proc/101/numa_maps", "");
  scan();
  EXPECT_THAT(scan()[101].resident_pages, ElementsAre(0, 1000));
  EXPECT_THAT(scan()[101].resident_pages, ElementsAre(0, 0))
      << "three scans old: read again";

  // A second thread: the count in stat changes, so the list is read again.
  const size_t threads = scan()[101].threads.size();
  std::filesystem::create_directories(tree.root() + "/proc/101/task/120");
  std::filesystem::copy(tree.root() + "/proc/101/task/101/stat",
                        tree.root() + "/proc/101/task/120/stat");
  std::filesystem::copy(tree.root() + "/proc/101/task/101/status",
                        tree.root() + "/proc/101/task/120/status");
  EXPECT_EQ(scan()[101].threads.size(), threads) << "same count: reused";
  std::ifstream in(tree.root() + "/proc/101/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  const std::string one_thread = " 20 0 1 0 1101 ";
  ASSERT_NE(stat.find(one_thread), std::string::npos);
  stat.replace(stat.find(one_thread), one_thread.size(), " 20 0 2 0 1101 ");
  // The scan reads the process's fields from its leader's task/PID/stat,
  // which the kernel keeps in step with PID/stat.
  auto write_stat = [&] {
    tree.Write("proc/101/stat", stat);
    tree.Write("proc/101/task/101/stat", stat);
  };
  write_stat();
  EXPECT_EQ(scan()[101].threads.size(), threads + 1);

  // The pid reused by another process (a new start time): nothing reused.
  moved_pages();
  stat.replace(stat.find(" 20 0 2 0 1101 "), 15, " 20 0 2 0 9999 ");
  write_stat();
  EXPECT_THAT(scan()[101].resident_pages, ElementsAre(0, 1000));
  EXPECT_THAT(errors, Not(Contains(HasSubstr("/101/"))));
}

// Without a cache, or with refresh_every 1, every scan reads everything.
TEST_F(TargetsTest, NoReuseByDefault) {
  TempTree tree;
  tree.CopyFixture("numa2");
  HostPaths paths{tree.root() + "/sys", tree.root() + "/proc"};
  TargetScanCache cache;
  std::vector<std::string> errors;
  ASSERT_TRUE(
      ScanTargets(paths, TargetScanOptions{}, topology_, &errors, &cache).ok());
  tree.Write("proc/101/numa_maps", "");
  auto targets =
      ScanTargets(paths, TargetScanOptions{}, topology_, &errors, &cache);
  ASSERT_TRUE(targets.ok());
  EXPECT_THAT(ByPid(*targets)[101].resident_pages, ElementsAre(0, 0));
}

// A HAProxy process tree in `tree`: `pid` with `threads` (the first is the
// process's own), started by `ppid`, as `cmdline`.
void WriteHaproxy(TempTree& tree, int pid, int ppid,
                  const std::vector<int>& threads, const std::string& cmdline) {
  const std::string dir = absl::StrCat("proc/", pid);
  auto stat = [&](int tid, int cpu) {
    return absl::StrCat(tid, " (haproxy) S ", ppid, " ", pid, " ", pid,
                        " 0 -1 4194560 100 0 0 0 12 3 0 0 20 0 ",
                        threads.size(), " 0 1", tid,
                        " 12345678 1234 -1 0 0 0 0 0 0 0 0 0 0 0 0 0 ", cpu,
                        " 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
  };
  auto status = [&](int tid) {
    return absl::StrCat("Name:\thaproxy\nTgid:\t", pid, "\nPid:\t", tid,
                        "\nPPid:\t", ppid,
                        "\nUid:\t0\t0\t0\t0\nCpus_allowed_list:\t0-3\n");
  };
  tree.Write(dir + "/stat", stat(pid, 0));
  tree.Write(dir + "/status", status(pid));
  tree.Write(dir + "/comm", "haproxy\n");
  tree.Write(dir + "/cmdline", cmdline);
  std::error_code exists;  // written again for a thread count that changed
  std::filesystem::create_symlink("/bin/sh", tree.root() + "/" + dir + "/exe",
                                  exists);
  for (size_t i = 0; i < threads.size(); ++i) {
    const std::string task = absl::StrCat(dir, "/task/", threads[i]);
    tree.Write(task + "/stat", stat(threads[i], static_cast<int>(i % 4)));
    tree.Write(task + "/status", status(threads[i]));
  }
}

// HAProxy in master-worker mode (-W) and one run alone: each thread of a
// worker process is a target of its own; the master is left as it was.
TEST_F(TargetsTest, ThreadWorkersAreOneTargetPerThread) {
  TempTree tree;
  tree.CopyFixture("numa2");
  const std::string master_cmdline("haproxy\0-W\0-f\0/etc/h.cfg\0", 25);
  WriteHaproxy(tree, 600, 1, {600}, master_cmdline);
  WriteHaproxy(tree, 601, 600, {601, 602, 603, 604}, master_cmdline);
  WriteHaproxy(tree, 700, 1, {700, 701}, std::string("haproxy\0", 8));
  HostPaths paths{tree.root() + "/sys", tree.root() + "/proc"};
  TargetScanOptions options;
  options.selector.comms = {"nginx", "haproxy"};
  options.selector.thread_worker_comms = {"haproxy"};
  std::vector<std::string> errors;
  auto targets = ScanTargets(paths, options, topology_, &errors);
  ASSERT_TRUE(targets.ok()) << targets.status();
  // No numa_maps is read for a thread worker's process (none is written).
  EXPECT_THAT(errors, Not(Contains(HasSubstr("haproxy"))));
  EXPECT_THAT(errors, Not(Contains(HasSubstr("/60"))));
  auto by_pid = ByPid(*targets);
  ASSERT_EQ(by_pid.count(600), 1u);
  EXPECT_EQ(by_pid[600].role, TargetRole::kMaster);
  EXPECT_EQ(by_pid[600].process, 0);
  for (int tid : {601, 602, 603, 604}) {
    SCOPED_TRACE(tid);
    ASSERT_EQ(by_pid.count(tid), 1u);
    const Target& worker = by_pid[tid];
    EXPECT_EQ(worker.role, TargetRole::kWorker);
    EXPECT_EQ(worker.process, 601);
    EXPECT_EQ(ProcessOf(worker), 601);
    EXPECT_EQ(worker.instance, 600);
    EXPECT_EQ(worker.comm, "haproxy");
    ASSERT_EQ(worker.threads.size(), 1u);
    EXPECT_EQ(worker.threads[0].tid, tid);
    EXPECT_THAT(worker.threads[0].allowed_cpus, ElementsAre(0, 1, 2, 3));
    EXPECT_THAT(worker.resident_pages, IsEmpty());
  }
  EXPECT_EQ(by_pid[602].threads[0].cpu, 1);
  // Alone, without a master: its threads are still its workers.
  EXPECT_EQ(by_pid[700].process, 700);
  EXPECT_EQ(by_pid[701].process, 700);
  EXPECT_EQ(by_pid[701].instance, 700);
  // nginx is as before: processes, with their pages.
  EXPECT_EQ(by_pid[102].process, 0);
  EXPECT_EQ(by_pid[102].threads.size(), 2u);
  EXPECT_EQ(by_pid.count(110), 0u);
}

// A reload (-sf, or the master's "reload"): the master forks a new worker
// process; its threads are new targets at the next scan and the old ones,
// gone, are no longer.
TEST_F(TargetsTest, ThreadWorkersOfANewWorkerProcessReplaceTheOld) {
  TempTree tree;
  tree.CopyFixture("numa2");
  const std::string cmdline("haproxy\0-W\0", 11);
  WriteHaproxy(tree, 600, 1, {600}, cmdline);
  WriteHaproxy(tree, 601, 600, {601, 602}, cmdline);
  HostPaths paths{tree.root() + "/sys", tree.root() + "/proc"};
  TargetScanOptions options;
  options.selector.comms = {"haproxy"};
  options.selector.thread_worker_comms = {"haproxy"};
  TargetScanCache cache;
  std::vector<std::string> errors;
  auto before = CachedScan(paths, options, &cache, &errors);
  EXPECT_EQ(before.count(602), 1u);
  std::filesystem::remove_all(tree.root() + "/proc/601");
  WriteHaproxy(tree, 650, 600, {650, 651}, cmdline);
  auto after = CachedScan(paths, options, &cache, &errors);
  EXPECT_EQ(after.count(601), 0u);
  EXPECT_EQ(after.count(602), 0u);
  ASSERT_EQ(after.count(651), 1u);
  EXPECT_EQ(after[651].process, 650);
  // A thread that exits is gone at the next scan, its siblings stay.
  std::filesystem::remove_all(tree.root() + "/proc/650/task/651");
  WriteHaproxy(tree, 650, 600, {650}, cmdline);  // its thread count, 1
  auto exited = CachedScan(paths, options, &cache, &errors);
  EXPECT_EQ(exited.count(651), 0u);
  EXPECT_EQ(exited.count(650), 1u);
}

TEST(TargetsLiveTest, ThisProcessBySelector) {
  HostPaths paths;
  auto topology = ReadTopology(paths.sysfs_root);
  ASSERT_TRUE(topology.ok());
  TargetScanOptions options;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  ASSERT_GT(n, 0);
  options.selector = TargetSelector{};
  options.selector.exe_paths = {std::string(exe, static_cast<size_t>(n))};
  std::vector<std::string> errors;
  auto targets = ScanTargets(paths, options, *topology, &errors);
  ASSERT_TRUE(targets.ok()) << targets.status();
  bool found = false;
  for (const Target& target : *targets) {
    if (target.pid != getpid()) continue;
    found = true;
    EXPECT_FALSE(target.threads.empty());
    uint64_t pages = 0;
    for (uint64_t p : target.resident_pages) pages += p;
    // On one node numa_maps is not read (OneNodeReadsNoNumaMaps).
    if (topology->nodes.size() > 1) {
      EXPECT_GT(pages, 0u);
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace locus
