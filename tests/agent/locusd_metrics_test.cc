// A running locusd's /metrics and textfile (root: the daemon loads BPF):
// the names and types a scraper sees, and counters that only grow between
// two scrapes.
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/scrape.h"
#include "tests/common/locusd_process.h"
#include "tests/common/test_paths.h"

namespace locus {
namespace {

// The port of "serving http://HOST:PORT/metrics" in the log; `host` as a
// regular expression.
int ServedPort(const std::string& log,
               const std::string& host = "127\\.0\\.0\\.1") {
  std::smatch match;
  const std::regex serving("metrics: serving http://" + host +
                           ":([0-9]+)/metrics");
  return std::regex_search(log, match, serving) ? std::stoi(match[1]) : 0;
}

TEST(LocusdMetricsTest, ScrapesARunningAgent) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: locusd loads BPF sensors";
  TempDir dir;
  LocusdProcess locusd(LOCUSD_PATH, dir.path());
  std::string textfile = dir.File("locus.prom");
  locusd.Start({"--mode=dry_run", "--metrics_listen=127.0.0.1:0",
                "--metrics_textfile=" + textfile});
  ASSERT_TRUE(locusd.WaitReady()) << locusd.log();
  int port = ServedPort(locusd.log());
  ASSERT_GT(port, 0) << locusd.log();
  ASSERT_TRUE(locusd.Watch(2, absl::Seconds(10)).ok());
  std::string first = Scrape(port);
  ASSERT_TRUE(locusd.Watch(3, absl::Seconds(10)).ok());
  std::string second = Scrape(port);

  std::map<std::string, std::string> types = Types(second);
  EXPECT_EQ(types["locus_actions_total"], "counter");
  EXPECT_EQ(types["locus_numa_faults_total"], "counter");
  EXPECT_EQ(types["locus_tick_duration_seconds"], "histogram");
  EXPECT_EQ(types["locus_acting"], "gauge");
  EXPECT_EQ(types["locus_sensor_up"], "gauge");
  auto before = Samples(first);
  auto after = Samples(second);
  EXPECT_EQ(after["locus_dry_run"], 1);
  EXPECT_EQ(after["locus_acting"], 0);
  EXPECT_GE(after["locus_tick_duration_seconds_count"],
            before["locus_tick_duration_seconds_count"] + 3);
  for (const auto& [sample, value] : before) {
    if (!absl::StrContains(sample, "_total") || !after.count(sample)) continue;
    EXPECT_GE(after[sample], value) << sample;
  }
  std::ifstream file(textfile);
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_EQ(Types(text.str())["locus_tick_duration_seconds"], "histogram");
  EXPECT_EQ(locusd.Stop(SIGTERM), 0) << locusd.log();
}

TEST(LocusdMetricsTest, RefusesABadAddressAtStart) {
  for (const char* bad :
       {"localhost:9477", "127.0.0.1:+1", "127.0.0.1:9477 ", "127.0.0.1:0x1"}) {
    ProcessResult result =
        RunProcess({LOCUSD_PATH, std::string("--metrics_listen=") + bad},
                   absl::Seconds(10));
    EXPECT_EQ(result.exit_code, 2) << bad;
    EXPECT_TRUE(absl::StrContains(result.err, "--metrics_listen"))
        << result.err;
  }
}

// It exited 1 with civetweb's "null context when constructing CivetServer"
// (Debian's civetweb has no IPv6), then refused the flag: now it serves.
TEST(LocusdMetricsTest, ServesOnIpv6Loopback) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: locusd loads BPF sensors";
  TempDir dir;
  LocusdProcess locusd(LOCUSD_PATH, dir.path());
  locusd.Start({"--mode=dry_run", "--metrics_listen=[::1]:0"});
  ASSERT_TRUE(locusd.WaitReady()) << locusd.log();
  int port = ServedPort(locusd.log(), "\\[::1\\]");
  ASSERT_GT(port, 0) << locusd.log();
  // The gauges are set by the first ticks, as in ScrapesARunningAgent.
  ASSERT_TRUE(locusd.Watch(2, absl::Seconds(10)).ok());
  EXPECT_EQ(Types(Scrape(port, /*ipv6=*/true))["locus_acting"], "gauge");
  EXPECT_EQ(locusd.Stop(SIGTERM), 0) << locusd.log();
}

}  // namespace
}  // namespace locus
