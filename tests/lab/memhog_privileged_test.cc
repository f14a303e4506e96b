// lab_memhog on this machine's real kernel (one node is enough): it reports
// ready only once its memory is resident on the touch node, and it keeps
// working on it afterwards. Placement is checked from outside, through
// /proc/PID/numa_maps, the way the benchmark measures it. With --thp it
// gets transparent huge pages, seen in its smaps.
#include <signal.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "agent/host/file_util.h"
#include "agent/host/numa_maps.h"
#include "agent/host/topology.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/process_util.h"
#include "tests/common/test_paths.h"
#include "tests/lab/memhog_args.h"

namespace locus {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr absl::Duration kStartTimeout = absl::Seconds(30);

// lab_memhog started with its output in a log of its own.
struct Memhog {
  explicit Memhog(std::vector<std::string> argv)
      : log(::testing::TempDir() + "/memhog-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name()) {
    unlink(log.c_str());
    pid = Spawn(argv, log);
  }
  ~Memhog() {
    if (pid > 0) Stop(pid, SIGKILL);
  }
  std::vector<std::string> Lines() const {
    return absl::StrSplit(ReadAll(log), '\n', absl::SkipEmpty());
  }
  // Whether a line for which `match` holds is out within `timeout`.
  bool WaitForLine(const std::function<bool(const std::string&)>& match,
                   absl::Duration timeout) const {
    return WaitUntil(
        [&] {
          for (const std::string& line : Lines()) {
            if (match(line)) return true;
          }
          return false;
        },
        timeout);
  }
  int Exit(int signal) {
    int code = Stop(pid, signal);
    pid = -1;
    return code;
  }
  std::string log;
  pid_t pid = -1;
};

bool IsReady(const std::string& line) { return line == "ready"; }

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
  Memhog memhog({LAB_MEMHOG_PATH, "--mb=" + std::to_string(kMb),
                 "--touch_node=" + std::to_string(node),
                 "--run_node=" + std::to_string(node), "--report_ms=50"});
  ASSERT_GT(memhog.pid, 0);
  ASSERT_TRUE(memhog.WaitForLine(IsReady, kStartTimeout))
      << ReadAll(memhog.log);
  // Nothing of its work before it (stderr, in the same log, says where its
  // pages are).
  for (const std::string& line : memhog.Lines()) {
    if (IsReady(line)) break;
    EXPECT_THAT(line, Not(HasSubstr("passes "))) << "before ready";
  }

  auto text =
      ReadTextFile("/proc/" + std::to_string(memhog.pid) + "/numa_maps");
  ASSERT_TRUE(text.ok()) << text.status();
  const uint64_t page_size = sysconf(_SC_PAGESIZE);
  auto per_node = ParseNumaMaps(*text, topology_, page_size);
  ASSERT_TRUE(per_node.ok()) << per_node.status();
  EXPECT_GE(per_node->at(NodeIndex(topology_, node)), (kMb << 20) / page_size);

  // After ready it keeps going over its memory and says so.
  EXPECT_TRUE(memhog.WaitForLine(
      [](const std::string& line) {
        return line.find("passes ") != std::string::npos;
      },
      absl::Seconds(10)))
      << ReadAll(memhog.log);
  EXPECT_EQ(memhog.Exit(SIGTERM), -SIGTERM);
}

// With --thp the kernel backs the buffer with transparent huge pages, where
// THP is not disabled: "madvise" is enough, since the buffer is advised.
TEST_F(MemhogTest, ThpBufferGetsHugePages) {
  auto enabled = ReadFirstLine("/sys/kernel/mm/transparent_hugepage/enabled");
  if (!enabled.ok()) GTEST_SKIP() << "no THP here: " << enabled.status();
  if (absl::StrContains(*enabled, "[never]")) {
    GTEST_SKIP() << "transparent_hugepage/enabled is never: " << *enabled;
  }
  constexpr uint64_t kMb = 64;
  const std::string node = std::to_string(topology_.nodes.front().id);
  Memhog memhog({LAB_MEMHOG_PATH, "--mb=" + std::to_string(kMb),
                 "--touch_node=" + node, "--run_node=" + node, "--report_ms=0",
                 "--thp"});
  ASSERT_GT(memhog.pid, 0);
  const std::string kPrefix = "anon_huge_kib ";
  ASSERT_TRUE(memhog.WaitForLine(
      [&](const std::string& line) { return line.rfind(kPrefix, 0) == 0; },
      kStartTimeout))
      << ReadAll(memhog.log);
  uint64_t reported_kib = 0;
  for (const std::string& line : memhog.Lines()) {
    if (line.rfind(kPrefix, 0) == 0) {
      ASSERT_TRUE(absl::SimpleAtoi(line.substr(kPrefix.size()), &reported_kib))
          << line;
    }
  }
  // Whole huge pages, most of the buffer (the kernel may fall back to base
  // pages for a few where it found no free 2 MiB), and as much seen from
  // outside, in the process's own smaps.
  EXPECT_EQ(reported_kib % 2048, 0u);
  EXPECT_GE(reported_kib, (kMb << 10) / 2) << ReadAll(memhog.log);
  EXPECT_LE(reported_kib, kMb << 10);
  auto smaps = ReadTextFile("/proc/" + std::to_string(memhog.pid) + "/smaps");
  ASSERT_TRUE(smaps.ok()) << smaps.status();
  auto outside = AnonHugeBytes(*smaps, 0, ~uint64_t{0});
  ASSERT_TRUE(outside.ok()) << outside.status();
  EXPECT_GE(*outside >> 10, reported_kib);
  memhog.Exit(SIGTERM);
}

TEST_F(MemhogTest, NamesItselfWhenReady) {
  // Started through a link of another name, it is "lab_memhog" only once
  // in place, so a tool selecting it by name does not see its setup.
  std::string link = ::testing::TempDir() + "/lab_memhog_prep";
  unlink(link.c_str());
  ASSERT_EQ(symlink(LAB_MEMHOG_PATH, link.c_str()), 0);
  const std::string node = std::to_string(topology_.nodes.front().id);
  Memhog memhog({link, "--mb=1", "--touch_node=" + node, "--run_node=" + node,
                 "--report_ms=0"});
  ASSERT_GT(memhog.pid, 0);
  ASSERT_TRUE(memhog.WaitForLine(IsReady, kStartTimeout))
      << ReadAll(memhog.log);
  auto comm = ReadFirstLine("/proc/" + std::to_string(memhog.pid) + "/comm");
  ASSERT_TRUE(comm.ok()) << comm.status();
  EXPECT_EQ(*comm, "lab_memhog");
  memhog.Exit(SIGTERM);
  unlink(link.c_str());
}

TEST_F(MemhogTest, RefusesANodeTheMachineDoesNotHave) {
  const int absent = topology_.nodes.back().id + 1;
  Memhog memhog({LAB_MEMHOG_PATH, "--mb=1", "--touch_node=0",
                 "--run_node=" + std::to_string(absent)});
  ASSERT_GT(memhog.pid, 0);
  EXPECT_EQ(memhog.Exit(0), 1);  // waits for it to exit by itself
  EXPECT_THAT(memhog.Lines(), Not(Contains("ready")));
}

TEST_F(MemhogTest, UsageErrorExitsWith2) {
  Memhog memhog({LAB_MEMHOG_PATH, "--mb=1"});
  ASSERT_GT(memhog.pid, 0);
  EXPECT_EQ(memhog.Exit(0), 2);
}

}  // namespace
}  // namespace locus
