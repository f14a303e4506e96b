// The policy file as an attacker or a careless admin leaves it, against a
// real locusd (root): a FIFO at the path at start, or swapped in while the
// daemon runs and then SIGHUP; a policy with bytes that are not UTF-8. The
// main thread must never block on the file (SIGTERM is handled there), a
// refused file keeps the running policy with the reason in status, status
// and watch keep working, and SIGTERM still puts every thread back.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/agent_test_util.h"
#include "tests/common/locusd_process.h"
#include "tests/common/process_util.h"
#include "tests/common/test_paths.h"

namespace locus {
namespace {

using ::testing::HasSubstr;

constexpr char kComm[] = "locus-pfile";

class PolicyFileFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "locusd needs root (BPF, affinity)";
    if (OnlineCpus().size() < 2) GTEST_SKIP() << "needs 2 online CPUs";
  }

  // What editors do: a new file renamed over the policy.
  void SwapIn(const std::function<void(const std::string&)>& make) {
    const std::string tmp = dir_.File("incoming");
    make(tmp);
    std::filesystem::rename(tmp, daemon_.policy());
  }

  // Until status shows a policy error containing `text`.
  absl::StatusOr<v1::AgentStatus> StatusWithError(const std::string& text) {
    absl::StatusOr<v1::AgentStatus> status;
    WaitUntil(
        [&] {
          status = daemon_.Status();
          return status.ok() &&
                 absl::StrContains(status->policy().last_error(), text);
        },
        absl::Seconds(20));
    return status;
  }

  TempDir dir_;
  LocusdProcess daemon_{LOCUSD_PATH, dir_.path()};
};

// A FIFO at start: refused at once (no writer is awaited), the daemon
// says why and exits instead of starting.
TEST_F(PolicyFileFaultTest, FifoAtStartIsRefusedAtOnce) {
  ASSERT_EQ(mkfifo(daemon_.policy().c_str(), 0600), 0) << strerror(errno);
  daemon_.Start({});
  EXPECT_TRUE(WaitUntil([&] { return !daemon_.running(); }, absl::Seconds(20)))
      << "locusd blocked on the FIFO\n"
      << daemon_.log();
  EXPECT_THAT(daemon_.log(), HasSubstr("is a FIFO, not a regular file"));
}

// Running and acting, then a FIFO swapped in and SIGHUP: the reload returns
// at once, status says why, the policy in force stays, and SIGTERM restores.
TEST_F(PolicyFileFaultTest, FifoSwappedInThenSighupThenSigtermRestores) {
  std::ofstream(daemon_.policy()) << FaultPolicy(kComm, "enforce", 8);
  TargetFamily family(FAULT_TARGET_PATH, kComm, 2, 2, dir_.File("target.log"));
  ASSERT_TRUE(family.ok()) << ReadAll(dir_.File("target.log"));
  const auto original = AffinityOfAll(family.workers());
  daemon_.Start({});
  ASSERT_TRUE(daemon_.WaitReady()) << daemon_.log();
  ASSERT_TRUE(
      WaitUntil([&] { return AffinityOfAll(family.workers()) != original; },
                absl::Seconds(30)))
      << "nothing moved\n"
      << daemon_.log();
  const uint64_t version = daemon_.Status()->policy().version();

  SwapIn(
      [](const std::string& tmp) { ASSERT_EQ(mkfifo(tmp.c_str(), 0600), 0); });
  ASSERT_EQ(kill(daemon_.pid(), SIGHUP), 0);
  auto status = StatusWithError("is a FIFO, not a regular file");
  ASSERT_TRUE(status.ok()) << status.status() << "\n" << daemon_.log();
  EXPECT_THAT(status->policy().last_error(),
              HasSubstr("is a FIFO, not a regular file"))
      << daemon_.log();
  EXPECT_EQ(status->policy().version(), version);
  EXPECT_EQ(status->mode(), v1::AGENT_MODE_ENFORCE);
  EXPECT_TRUE(status->policy().has_loaded());

  EXPECT_EQ(daemon_.Stop(SIGTERM), 0) << daemon_.log();
  EXPECT_EQ(AffinityOfAll(family.workers()), original);
}

// A rejected policy quoting bytes that are not UTF-8: status and watch
// still answer (a proto3 string with such bytes cannot be parsed).
TEST_F(PolicyFileFaultTest, InvalidUtf8PolicyLeavesStatusAndWatchWorking) {
  std::ofstream(daemon_.policy()) << FaultPolicy(kComm, "dry_run", 8);
  daemon_.Start({});
  ASSERT_TRUE(daemon_.WaitReady()) << daemon_.log();
  SwapIn([](const std::string& tmp) {
    std::ofstream(tmp) << "mode: dry_run\n\xff\xfe: 1\n";
  });
  auto status = StatusWithError("unknown key");
  ASSERT_TRUE(status.ok()) << status.status() << "\n" << daemon_.log();
  EXPECT_THAT(status->policy().last_error(), HasSubstr("\\xff\\xfe"));
  auto watched = daemon_.Watch(2, absl::Seconds(10));
  ASSERT_TRUE(watched.ok()) << watched.status();
  EXPECT_THAT(watched->back().policy().last_error(), HasSubstr("\\xff\\xfe"));
  EXPECT_EQ(daemon_.Stop(SIGTERM), 0) << daemon_.log();
}

}  // namespace
}  // namespace locus
