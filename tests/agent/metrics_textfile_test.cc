// --metrics_textfile under a directory someone else controls: root writes
// only where the path pointed at start. A directory of the path swapped for
// a symlink later, a symlink on it at start, a link planted at the file's
// own name: none makes root create or change a file elsewhere.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "agent/api/metrics_export.h"
#include "agent/api/prometheus_textfile.h"
#include "gtest/gtest.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/realistic_metrics.h"

namespace locus {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::StatusOr<std::unique_ptr<MetricsExport>> WriteTo(
    const std::string& path) {
  MetricsExportOptions options;
  options.textfile = path;
  return MetricsExport::Start(options, {"1", "k"});
}

void Tick(MetricsExport& out, int t) {
  RealisticShape shape{.nodes = 2, .threads = 10, .irqs = 2};
  out.Observe(RealisticMetrics(t, shape), RealisticStatus(t, shape));
}

TEST(MetricsTextfileTest, ParentSwappedForASymlinkDoesNotRedirectWrites) {
  TempDir dir;
  fs::create_directories(dir.File("user/metrics"));
  fs::create_directories(dir.File("elsewhere"));
  auto started = WriteTo(dir.File("user/metrics/locus.prom"));
  ASSERT_TRUE(started.ok()) << started.status();
  // What a user who owns user/ can do while locusd runs, at both levels.
  fs::rename(dir.File("user/metrics"), dir.File("user/old"));
  fs::create_directory_symlink(dir.File("elsewhere"), dir.File("user/metrics"));
  Tick(**started, 1);
  EXPECT_FALSE(fs::exists(dir.File("elsewhere/locus.prom")));
  EXPECT_TRUE(
      absl::StrContains(Slurp(dir.File("user/old/locus.prom")), "locus_"));

  fs::rename(dir.File("user"), dir.File("user.old"));
  fs::create_directory_symlink(dir.File("elsewhere"), dir.File("user"));
  fs::create_directories(dir.File("elsewhere/metrics"));
  Tick(**started, 2);
  EXPECT_FALSE(fs::exists(dir.File("elsewhere/metrics/locus.prom")));
  EXPECT_FALSE(fs::exists(dir.File("elsewhere/locus.prom")));
  for (const auto& entry : fs::directory_iterator(dir.File("user.old/old"))) {
    EXPECT_EQ(entry.path().filename(), "locus.prom");  // no temporary left
  }
}

TEST(MetricsTextfileTest, RefusesASymlinkOnThePathAtStart) {
  TempDir dir;
  fs::create_directories(dir.File("real"));
  fs::create_directory_symlink(dir.File("real"), dir.File("link"));
  std::string path = dir.File("link/locus.prom");
  auto refused = WriteTo(path);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), path));
  EXPECT_TRUE(absl::StrContains(refused.status().message(),
                                dir.File("link") + " is a symbolic link"))
      << refused.status();
  EXPECT_FALSE(fs::exists(dir.File("real/locus.prom")));

  auto dotdot = WriteTo(dir.File("real/../real/locus.prom"));
  EXPECT_EQ(dotdot.status().code(), absl::StatusCode::kInvalidArgument);
  auto no_name = WriteTo(dir.File("real/"));
  EXPECT_EQ(no_name.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MetricsTextfileTest, ALinkAtTheFilesNameIsReplacedNotFollowed) {
  TempDir dir;
  std::string victim = dir.File("victim");
  { std::ofstream(victim) << "untouched\n"; }
  fs::create_symlink(victim, dir.File("locus.prom"));
  auto started = WriteTo(dir.File("locus.prom"));
  ASSERT_TRUE(started.ok()) << started.status();
  Tick(**started, 1);
  EXPECT_EQ(Slurp(victim), "untouched\n");
  EXPECT_FALSE(fs::is_symlink(dir.File("locus.prom")));
  struct stat st;
  ASSERT_EQ(stat(dir.File("locus.prom").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644);
}

// The experiment record's writer (agent/experiment/record.cc) still
// resolves its path as open(2) does, and still replaces the file whole.
TEST(MetricsTextfileTest, WriteTextfileAtomicallyStillFollowsItsPath) {
  TempDir dir;
  fs::create_directories(dir.File("real"));
  fs::create_directory_symlink(dir.File("real"), dir.File("link"));
  ASSERT_TRUE(WriteTextfileAtomically(dir.File("link/record"), "one").ok());
  ASSERT_TRUE(WriteTextfileAtomically(dir.File("link/record"), "two").ok());
  EXPECT_EQ(Slurp(dir.File("real/record")), "two");
  absl::Status missing = WriteTextfileAtomically(dir.File("no/record"), "x");
  EXPECT_TRUE(absl::IsNotFound(missing)) << missing;
  EXPECT_TRUE(absl::StrContains(missing.message(), dir.File("no/record")));
}

}  // namespace
}  // namespace locus
