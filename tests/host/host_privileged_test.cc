// The host model against a real nginx on this machine: master and workers
// told apart, and after a reload (SIGHUP, what `nginx -s reload` sends) the
// new workers are in the next scan and the old ones are not.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "agent/act/actuators.h"
#include "agent/host/file_util.h"
#include "agent/host/host_model.h"
#include "agent/host/proc_parse.h"
#include "agent/host/targets.h"
#include "agent/host/topology.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/loopback_port.h"
#include "tests/common/process_util.h"
#include "tests/common/test_paths.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

constexpr char kNginx[] = "/usr/sbin/nginx";

class NginxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    if (access(kNginx, X_OK) != 0) GTEST_SKIP() << kNginx << " not installed";
    const std::string dir = tree_.root();
    std::filesystem::create_directories(dir + "/logs");
    const int port = UnusedLoopbackPort();
    ASSERT_GT(port, 0) << "no free port on 127.0.0.1";
    std::ofstream(dir + "/nginx.conf")
        << "daemon off;\nmaster_process on;\nworker_processes 2;\n"
        << "pid " << dir << "/nginx.pid;\nerror_log " << dir
        << "/logs/error.log;\nevents { worker_connections 64; }\n"
        << "http { access_log off; server { listen 127.0.0.1:" << port
        << "; return 200; } }\n";
    master_ = fork();
    if (master_ == 0) {
      execl(kNginx, kNginx, "-p", dir.c_str(), "-c",
            (dir + "/nginx.conf").c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    ASSERT_GT(master_, 0);
    ASSERT_TRUE(WaitForWorkers({}));
  }
  void TearDown() override {
    if (master_ > 0) {
      kill(master_, SIGTERM);
      waitpid(master_, nullptr, 0);
    }
  }
  // Waits until the master has exactly 2 children that are not in `old`
  // and have set their title: a worker just forked still shows the master's
  // "nginx: master process" cmdline for a moment (the model then calls it a
  // master for that one scan).
  bool WaitForWorkers(const std::set<int32_t>& old) {
    for (int i = 0; i < 100; ++i) {
      std::set<int32_t> children = ChildrenOf(master_);
      bool fresh = children.size() == 2;
      for (int32_t pid : children) {
        auto cmdline =
            ReadTextFile("/proc/" + std::to_string(pid) + "/cmdline");
        fresh = fresh && !old.count(pid) && cmdline.ok() &&
                ParseCmdline(*cmdline) == "nginx: worker process";
      }
      if (fresh) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  // This nginx's targets (other nginx instances may run on the machine).
  // The machine is shown as two nodes (tests/fixtures/split2), as on one
  // node the model reads no numa_maps.
  std::map<int32_t, Target> Scan() {
    HostModelOptions options;
    options.paths.sysfs_root =
        std::string(LOCUS_SOURCE_DIR) + "/tests/fixtures/split2/sys";
    HostModel model(options);
    Snapshot snapshot;
    std::vector<std::string> errors;
    EXPECT_TRUE(model.Refresh(&snapshot, &errors).ok());
    std::set<int32_t> ours = ChildrenOf(master_);
    ours.insert(master_);
    std::map<int32_t, Target> out;
    for (const Target& target : snapshot.targets) {
      if (ours.count(target.pid)) out[target.pid] = target;
    }
    return out;
  }
  TempTree tree_;
  pid_t master_ = -1;
};

TEST_F(NginxTest, MasterAndWorkersThenReload) {
  std::map<int32_t, Target> before = Scan();
  ASSERT_EQ(before.size(), 3u);
  std::set<int32_t> old_workers;
  for (const auto& [pid, target] : before) {
    if (pid == master_) {
      EXPECT_EQ(target.role, TargetRole::kMaster);
    } else {
      EXPECT_EQ(target.role, TargetRole::kWorker);
      old_workers.insert(pid);
    }
    EXPECT_FALSE(target.threads.empty());
    uint64_t pages = 0;
    for (uint64_t p : target.resident_pages) pages += p;
    EXPECT_GT(pages, 0u) << "pid " << pid;
  }
  ASSERT_EQ(old_workers.size(), 2u);

  ASSERT_EQ(kill(master_, SIGHUP), 0);  // nginx -s reload
  ASSERT_TRUE(WaitForWorkers(old_workers));
  std::map<int32_t, Target> after = Scan();
  int workers = 0;
  for (const auto& [pid, target] : after) {
    EXPECT_EQ(old_workers.count(pid), 0u) << "old worker " << pid;
    if (target.role == TargetRole::kWorker) ++workers;
  }
  EXPECT_EQ(workers, 2);
  EXPECT_EQ(after.count(master_), 1u);
}

// The model and the actuators together: every worker thread the model finds
// is pinned to CPU 1, the next scan shows it, and the exit restore undoes it.
TEST_F(NginxTest, PinWorkersSeenByModelThenRestored) {
  TempTree journal_dir;
  ActuatorOptions options;
  options.journal.path = journal_dir.root() + "/journal";
  auto actuators = Actuators::Create(options, MakeKernelOps(options));
  ASSERT_TRUE(actuators.ok()) << actuators.status();
  std::map<int32_t, std::vector<int>> original;
  for (const auto& [pid, target] : Scan()) {
    if (target.role != TargetRole::kWorker) continue;
    for (const ThreadSample& thread : target.threads) {
      original[thread.tid] = thread.allowed_cpus;
      Action pin{PinThread{pid, thread.tid, 0, {1}}, "test", 0};
      ActionResult result = (*actuators)->Apply(pin);
      EXPECT_EQ(result.outcome, Outcome::kApplied) << result.message;
    }
  }
  ASSERT_GE(original.size(), 2u);
  for (const auto& [pid, target] : Scan()) {
    for (const ThreadSample& thread : target.threads) {
      if (!original.count(thread.tid)) continue;
      EXPECT_EQ(thread.allowed_cpus, std::vector<int>{1}) << thread.tid;
    }
  }
  auto report = (*actuators)->RestoreAll();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->threads_restored, static_cast<int>(original.size()));
  for (const auto& [pid, target] : Scan()) {
    for (const ThreadSample& thread : target.threads) {
      if (!original.count(thread.tid)) continue;
      EXPECT_EQ(thread.allowed_cpus, original[thread.tid]) << thread.tid;
    }
  }
}

}  // namespace
}  // namespace locus
