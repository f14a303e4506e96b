// lab_memhog on this machine's real kernel (one node is enough): it reports
// ready only once its memory is resident on the touch node, and it keeps
// working on it afterwards. Placement is checked from outside, through
// /proc/PID/numa_maps, the way the benchmark measures it.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "agent/host/file_util.h"
#include "agent/host/numa_maps.h"
#include "agent/host/topology.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using ::testing::HasSubstr;

// A child whose stdout is read line by line with a deadline.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv) {
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      std::vector<char*> args;
      for (const std::string& a : argv) {
        args.push_back(const_cast<char*>(a.c_str()));
      }
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(out[1]);
    fd_ = out[0];
  }
  ~Child() {
    if (pid_ > 0) Wait(SIGKILL);
    if (fd_ >= 0) close(fd_);
  }
  pid_t pid() const { return pid_; }

  // Next line of output, or "" at EOF or after `timeout`.
  std::string ReadLine(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p = {fd_, POLLIN, 0};
      if (left.count() <= 0 || poll(&p, 1, left.count()) <= 0) return "";
      char chunk[4096];
      ssize_t n = read(fd_, chunk, sizeof(chunk));
      if (n <= 0) return "";
      buffer_.append(chunk, n);
    }
  }

  // Sends `signal` (0: none) and reaps; the exit code, or -signal.
  int Wait(int signal) {
    if (signal != 0) kill(pid_, signal);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string buffer_;
};

constexpr auto kStartTimeout = std::chrono::seconds(30);

class MemhogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto topology = ReadTopology("/sys");
    if (!topology.ok() || topology->nodes.empty()) {
      GTEST_SKIP() << "no NUMA topology in /sys: " << topology.status();
    }
    topology_ = *topology;
  }
  Topology topology_;
};

TEST_F(MemhogTest, ReportsReadyWithItsMemoryResidentOnTheTouchNode) {
  constexpr uint64_t kMb = 64;
  const int node = topology_.nodes.front().id;
  Child memhog({LAB_MEMHOG_PATH, "--mb=" + std::to_string(kMb),
                "--touch_node=" + std::to_string(node),
                "--run_node=" + std::to_string(node), "--report_ms=50"});
  ASSERT_GT(memhog.pid(), 0);
  ASSERT_EQ(memhog.ReadLine(kStartTimeout), "ready");

  auto text =
      ReadTextFile("/proc/" + std::to_string(memhog.pid()) + "/numa_maps");
  ASSERT_TRUE(text.ok()) << text.status();
  const uint64_t page_size = sysconf(_SC_PAGESIZE);
  auto per_node = ParseNumaMaps(*text, topology_, page_size);
  ASSERT_TRUE(per_node.ok()) << per_node.status();
  EXPECT_GE(per_node->at(NodeIndex(topology_, node)), (kMb << 20) / page_size);

  // After ready it keeps going over its memory and says so.
  EXPECT_THAT(memhog.ReadLine(std::chrono::seconds(10)), HasSubstr("passes "));
  EXPECT_EQ(memhog.Wait(SIGTERM), -SIGTERM);
}

TEST_F(MemhogTest, NamesItselfWhenReady) {
  // Started through a link of another name, it is "lab_memhog" only once
  // in place, so a tool selecting it by name does not see its setup.
  std::string link = ::testing::TempDir() + "/lab_memhog_prep";
  unlink(link.c_str());
  ASSERT_EQ(symlink(LAB_MEMHOG_PATH, link.c_str()), 0);
  const std::string node = std::to_string(topology_.nodes.front().id);
  Child memhog({link, "--mb=1", "--touch_node=" + node, "--run_node=" + node,
                "--report_ms=0"});
  ASSERT_GT(memhog.pid(), 0);
  ASSERT_EQ(memhog.ReadLine(kStartTimeout), "ready");
  auto comm = ReadFirstLine("/proc/" + std::to_string(memhog.pid()) + "/comm");
  ASSERT_TRUE(comm.ok()) << comm.status();
  EXPECT_EQ(*comm, "lab_memhog");
  memhog.Wait(SIGTERM);
  unlink(link.c_str());
}

TEST_F(MemhogTest, RefusesANodeTheMachineDoesNotHave) {
  const int absent = topology_.nodes.back().id + 1;
  Child memhog({LAB_MEMHOG_PATH, "--mb=1", "--touch_node=0",
                "--run_node=" + std::to_string(absent)});
  ASSERT_GT(memhog.pid(), 0);
  EXPECT_EQ(memhog.ReadLine(kStartTimeout), "");
  EXPECT_EQ(memhog.Wait(0), 1);
}

TEST_F(MemhogTest, UsageErrorExitsWith2) {
  Child memhog({LAB_MEMHOG_PATH, "--mb=1"});
  ASSERT_GT(memhog.pid(), 0);
  EXPECT_EQ(memhog.Wait(0), 2);
}

}  // namespace
}  // namespace locus
