// locusd's log as containers read it (--log_format=json, every line parsed
// by Python's json module), its verbosity changed at run time with
// `locusctl log-level`, and the host's name and boot id in the status and
// the metrics stream (root: locusd loads BPF).
#include <signal.h>
#include <unistd.h>

#include <climits>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/agent_test_util.h"
#include "tests/common/locusd_process.h"
#include "tests/common/process_util.h"
#include "tests/common/test_paths.h"

namespace locus {
namespace {

using ::testing::HasSubstr;

// Selects nothing that runs here.
constexpr char kPolicy[] = "mode: dry_run\ntargets:\n  comm: [locus-none]\n";

// Each line a JSON object with the journal's fields; prints how many lines
// were debug lines.
constexpr char kCheckJson[] = R"(
import json, sys
debug = 0
for n, line in enumerate(open(sys.argv[1]), 1):
    entry = json.loads(line)
    assert isinstance(entry, dict), n
    for key in ("time", "PRIORITY", "LEVEL", "MESSAGE"):
        assert key in entry, (n, key, line)
    assert isinstance(entry["PRIORITY"], int), line
    debug += entry["LEVEL"] == "debug"
print(debug)
)";

class LocusdLogsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "locusd needs root (BPF, affinity)";
    std::ofstream(daemon_.policy()) << kPolicy;
  }
  ProcessResult Ctl(const std::string& level) {
    return RunProcess(
        {LOCUSCTL_PATH, "--socket=" + daemon_.socket(), "log-level", level});
  }
  bool LogHas(const std::string& text) {
    return WaitUntil([&] { return absl::StrContains(daemon_.log(), text); },
                     absl::Seconds(10));
  }

  TempDir dir_;
  LocusdProcess daemon_{LOCUSD_PATH, dir_.path()};
};

TEST_F(LocusdLogsTest, JsonLinesAndALogLevelChangedWhileRunning) {
  daemon_.Start({"--log_format=json"});
  ASSERT_TRUE(daemon_.WaitReady()) << daemon_.log();
  ASSERT_TRUE(LogHas("\"MESSAGE\":\"locusd ")) << daemon_.log();
  EXPECT_THAT(daemon_.log(), ::testing::Not(HasSubstr("\"LEVEL\":\"debug\"")));

  ProcessResult raised = Ctl("1");
  ASSERT_EQ(raised.exit_code, 0) << raised.err;
  EXPECT_EQ(raised.out, "log level 1 (was 0)\n");
  // The loop's per-tick debug line, at the level just set.
  EXPECT_TRUE(LogHas("\"LEVEL\":\"debug\"")) << daemon_.log();
  ProcessResult lowered = Ctl("0");
  ASSERT_EQ(lowered.exit_code, 0) << lowered.err;
  EXPECT_EQ(lowered.out, "log level 0 (was 1)\n");
  EXPECT_EQ(Ctl("-1").exit_code, 2) << "a usage error, checked before calling";

  ASSERT_EQ(daemon_.Stop(SIGTERM), 0) << daemon_.log();
  ProcessResult parsed =
      RunProcess({"/usr/bin/python3", "-c", kCheckJson, daemon_.log_path()});
  ASSERT_EQ(parsed.exit_code, 0) << parsed.err << daemon_.log();
  EXPECT_NE(absl::StripAsciiWhitespace(parsed.out), "0");
}

TEST_F(LocusdLogsTest, StatusAndStreamNameTheHostAndItsBoot) {
  daemon_.Start({});
  ASSERT_TRUE(daemon_.WaitReady()) << daemon_.log();
  char host[HOST_NAME_MAX + 1] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  std::string boot_id(
      absl::StripAsciiWhitespace(ReadAll("/proc/sys/kernel/random/boot_id")));
  ASSERT_EQ(boot_id.size(), 36u);

  absl::StatusOr<v1::AgentStatus> status = daemon_.Status();
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->hostname(), host);
  EXPECT_EQ(status->boot_id(), boot_id);
  auto messages = daemon_.Watch(2, absl::Seconds(10));
  ASSERT_TRUE(messages.ok()) << messages.status();
  for (const v1::Metrics& metrics : *messages) {
    EXPECT_EQ(metrics.hostname(), host);
    EXPECT_EQ(metrics.boot_id(), boot_id);
  }
}

}  // namespace
}  // namespace locus
