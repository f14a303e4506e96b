// A real look-alike (root): a copy of sleep(1) named nginx, owned by and
// running as nobody, with nginx's worker title, is seen on this host's /proc
// and refused with the reason; the same copy owned by and run as root is a
// target.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "agent/host/targets.h"
#include "agent/host/topology.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::HasSubstr;

// Starts `binary` as `uid` with nginx's worker title; its pid.
pid_t StartAs(const std::string& binary, uid_t uid) {
  pid_t pid = fork();
  if (pid == 0) {
    if (setgid(uid) != 0 || setuid(uid) != 0) _exit(126);
    char title[] = "nginx: worker process";
    char seconds[] = "30";
    char* argv[] = {title, seconds, nullptr};
    execv(binary.c_str(), argv);
    _exit(127);
  }
  return pid;
}

class LookAlikeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "running as nobody needs root";
    chmod(tree_.root().c_str(), 0755);  // nobody must reach the binary
  }
  void TearDown() override {
    for (pid_t pid : started_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  std::string CopySleep(const std::string& dir, uid_t owner) {
    std::filesystem::create_directories(tree_.root() + "/" + dir);
    const std::string path = tree_.root() + "/" + dir + "/nginx";
    std::filesystem::copy_file("/bin/sleep", path);
    EXPECT_EQ(chown(path.c_str(), owner, owner), 0);
    EXPECT_EQ(chmod(path.c_str(), 0755), 0);
    return path;
  }
  // Scans until `pid` runs under its new name (exec done); the refusals.
  std::vector<RefusedTarget> Scan(pid_t pid, bool* is_target) {
    auto topology = ReadTopology("/sys");
    EXPECT_TRUE(topology.ok());
    TargetScanOptions options;
    options.read_numa_maps = false;
    std::vector<RefusedTarget> refused;
    for (int i = 0; i < 200; ++i) {
      std::vector<std::string> errors;
      refused.clear();
      auto targets = ScanTargets({"/sys", "/proc"}, options, *topology, &errors,
                                 nullptr, &refused);
      EXPECT_TRUE(targets.ok());
      *is_target = std::any_of(targets->begin(), targets->end(),
                               [&](const Target& t) { return t.pid == pid; });
      bool seen = *is_target || std::any_of(refused.begin(), refused.end(),
                                            [&](const RefusedTarget& r) {
                                              return r.pid == pid;
                                            });
      if (seen) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return refused;
  }
  TempTree tree_;
  std::vector<pid_t> started_;
};

TEST_F(LookAlikeTest, NobodysNginxIsRefusedRootsIsATarget) {
  const uid_t nobody = 65534;
  pid_t fake = StartAs(CopySleep("user", nobody), nobody);
  started_.push_back(fake);
  bool is_target = true;
  std::vector<RefusedTarget> refused = Scan(fake, &is_target);
  EXPECT_FALSE(is_target);
  auto it = std::find_if(refused.begin(), refused.end(),
                         [&](const RefusedTarget& r) { return r.pid == fake; });
  ASSERT_NE(it, refused.end()) << "the look-alike was not selected at all";
  EXPECT_EQ(it->comm, "nginx");
  EXPECT_THAT(it->reason, HasSubstr("is owned by uid 65534, not root"));

  pid_t real = StartAs(CopySleep("root", 0), 0);
  started_.push_back(real);
  refused = Scan(real, &is_target);
  EXPECT_TRUE(is_target);
}

}  // namespace
}  // namespace locus
