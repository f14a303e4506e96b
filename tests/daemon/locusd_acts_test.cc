// locusd acting on a real nginx, on this one-node machine presented as two
// nodes (tests/fixtures/split2: CPU 0 is node 0, CPU 1 is node 1). Under
// loopback load the scheduler moves the workers between the CPUs, so the
// agent pins them to their home "nodes"; the test checks that the pins are
// journaled, and that every worker thread gets its original affinity back on
// SIGTERM, and after kill -9 through `locusd --restore`.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "agent/host/file_util.h"
#include "agent/host/proc_parse.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/agent_test_util.h"
#include "tests/common/loopback_port.h"
#include "tests/common/process_util.h"
#include "tests/common/test_paths.h"

namespace locus {
namespace {

constexpr char kNginx[] = "/usr/sbin/nginx";
constexpr char kWrk[] = "/usr/bin/wrk";

class LocusdActsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs 2 CPUs";
    ASSERT_EQ(access(kNginx, X_OK), 0) << "deploy/deps.sh installs nginx";
    ASSERT_EQ(access(kWrk, X_OK), 0) << "deploy/deps.sh installs wrk";
    std::filesystem::create_directories(dir_.File("logs"));
    port_ = UnusedLoopbackPort();
    ASSERT_GT(port_, 0) << "no free port on 127.0.0.1";
    std::ofstream(dir_.File("nginx.conf"))
        << "daemon off;\nmaster_process on;\nworker_processes 2;\n"
        << "pid " << dir_.File("nginx.pid") << ";\nerror_log "
        << dir_.File("logs/error.log") << ";\n"
        << "events { worker_connections 256; }\n"
        << "http { access_log off; server { listen 127.0.0.1:" << port_
        << "; return 200 \"ok\"; } }\n";
    master_ = Spawn({kNginx, "-p", dir_.path(), "-c", dir_.File("nginx.conf")},
                    dir_.File("nginx.log"));
    ASSERT_GT(master_, 0);
    for (int i = 0; i < 100 && ChildrenOf(master_).size() < 2; ++i) {
      absl::SleepFor(absl::Milliseconds(50));
    }
    workers_ = ChildrenOf(master_);
    ASSERT_EQ(workers_.size(), 2u);
    for (pid_t w : workers_) original_[w] = ThreadAffinity(w);
    // Load long enough for every phase; wrk stops by itself.
    load_ = Spawn({kWrk, "-t1", "-c8", "-d60s",
                   "http://127.0.0.1:" + std::to_string(port_) + "/"},
                  dir_.File("wrk.log"));
  }

  void TearDown() override {
    if (agent_ > 0) Stop(agent_, SIGKILL);
    if (load_ > 0) Stop(load_, SIGKILL);
    if (master_ > 0) Stop(master_, SIGTERM);
  }

  pid_t StartAgent() {
    return Spawn({LOCUSD_PATH, "--sysfs_root=" + fixture_,
                  "--socket=" + dir_.File("locusd.sock"),
                  "--journal=" + dir_.File("journal"),
                  "--policy=" + dir_.File("absent.yaml"), "--tick=250ms"},
                 dir_.File("locusd.log"));
  }

  // Waits until the agent has pinned at least one worker.
  bool WaitForPin() {
    absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (absl::Now() < deadline) {
      for (pid_t w : workers_) {
        if (ThreadAffinity(w) != original_[w]) return true;
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
    return false;
  }

  void ExpectAllOriginal() {
    for (pid_t w : workers_) {
      EXPECT_EQ(ThreadAffinity(w), original_[w]) << "worker " << w;
    }
  }

  const std::string fixture_ =
      std::string(LOCUS_SOURCE_DIR) + "/tests/fixtures/split2/sys";
  TempDir dir_;
  int port_ = 0;
  pid_t master_ = -1, load_ = -1, agent_ = -1;
  std::set<pid_t> workers_;
  std::map<pid_t, std::vector<int>> original_;
};

TEST_F(LocusdActsTest, PinsWorkersAndRestoresThemOnSigterm) {
  agent_ = StartAgent();
  ASSERT_TRUE(WaitForPin()) << ReadAll(dir_.File("locusd.log"));
  std::string journal = ReadAll(dir_.File("journal"));
  EXPECT_THAT(journal, ::testing::HasSubstr("T ")) << "journaled before acting";
  EXPECT_THAT(ReadAll(dir_.File("locusd.log")), ::testing::HasSubstr("pin"));

  EXPECT_EQ(Stop(agent_, SIGTERM), 0);
  agent_ = -1;
  ExpectAllOriginal();
  EXPECT_NE(access(dir_.File("journal").c_str(), F_OK), 0)
      << "journal cleared once everything was restored";
}

TEST_F(LocusdActsTest, JournalRestoresAfterKill9) {
  agent_ = StartAgent();
  ASSERT_TRUE(WaitForPin()) << ReadAll(dir_.File("locusd.log"));
  Stop(agent_, SIGKILL);
  agent_ = -1;
  bool still_pinned = false;
  for (pid_t w : workers_) still_pinned |= ThreadAffinity(w) != original_[w];
  EXPECT_TRUE(still_pinned) << "a killed agent restores nothing by itself";

  ProcessResult restore = RunProcess(
      {LOCUSD_PATH, "--restore", "--journal=" + dir_.File("journal")});
  EXPECT_EQ(restore.exit_code, 0) << restore.err;
  EXPECT_THAT(restore.err, ::testing::HasSubstr("restored"));
  ExpectAllOriginal();
}

}  // namespace
}  // namespace locus
