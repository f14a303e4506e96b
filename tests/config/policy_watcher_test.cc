// PolicyWatcher against a real directory and real inotify: write-and-rename,
// in-place writes, ConfigMap-style symlink swaps, SIGHUP-style Reload(), bad
// files that must not replace the running policy, and removal.
#include "agent/config/policy_watcher.h"

#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/log.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/default_policy.h"

namespace locus {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class PolicyWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (fs::temp_directory_path() / "locus-policy-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/policy.yaml";
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void WriteFile(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::trunc);
    out << text;
  }
  // What editors do: write a temporary file, rename it over the original.
  void WriteAndRename(const std::string& text) {
    std::string tmp = dir_ + "/.policy.yaml.swp";
    WriteFile(tmp, text);
    fs::rename(tmp, path_);
  }

  // Waits for the watcher's fd, then lets it handle what arrived. Returns
  // whether the policy changed; false if nothing arrived within 2 s.
  static bool Settle(PolicyWatcher& watcher) {
    bool changed = false;
    struct pollfd pfd = {watcher.fd(), POLLIN, 0};
    int timeout_ms = 2000;
    // Keep going until 100 ms pass quietly: several events may trickle in.
    while (poll(&pfd, 1, timeout_ms) > 0) {
      changed |= watcher.OnReadable();
      timeout_ms = 100;
    }
    return changed;
  }

  std::string dir_;
  std::string path_;
};

TEST_F(PolicyWatcherTest, AbsentFileRunsTheBuiltInDefaultAndSaysSo) {
  PolicyWatcher watcher({path_, std::nullopt});
  ASSERT_TRUE(watcher.Start().ok());
  PolicyState state = watcher.state();
  EXPECT_TRUE(state.is_default);
  EXPECT_EQ(state.source,
            absl::StrCat("built-in default (", path_, " absent)"));
  EXPECT_EQ(state.version, 1u);
  EXPECT_TRUE(state.last_error.empty());
  EXPECT_EQ(state.policy->DebugString(), DefaultPolicy().DebugString());
}

TEST_F(PolicyWatcherTest, FileCreatedLaterIsPickedUp) {
  PolicyWatcher watcher({path_, std::nullopt});
  ASSERT_TRUE(watcher.Start().ok());
  WriteFile(path_, "mode: dry_run\n");
  EXPECT_TRUE(Settle(watcher));
  PolicyState state = watcher.state();
  EXPECT_FALSE(state.is_default);
  EXPECT_EQ(state.source, path_);
  EXPECT_EQ(state.version, 2u);
  EXPECT_EQ(state.policy->mode(), v1::Policy::MODE_DRY_RUN);
}

TEST_F(PolicyWatcherTest, WriteAndRenameReloads) {
  WriteFile(path_, "mode: dry_run\n");
  PolicyWatcher watcher({path_, std::nullopt});
  ASSERT_TRUE(watcher.Start().ok());
  EXPECT_EQ(watcher.policy()->mode(), v1::Policy::MODE_DRY_RUN);

  WriteAndRename("mode: dry_run\nstability:\n  min_gain: 0.25\n");
  EXPECT_TRUE(Settle(watcher));
  EXPECT_EQ(watcher.policy()->stability().min_gain(), 0.25);
  EXPECT_EQ(watcher.state().version, 2u);

  // The renamed-over file is a new inode: edits to it are seen too.
  WriteFile(path_, "mode: enforce\n");
  EXPECT_TRUE(Settle(watcher));
  EXPECT_EQ(watcher.policy()->mode(), v1::Policy::MODE_ENFORCE);
  EXPECT_EQ(watcher.state().version, 3u);
}

TEST_F(PolicyWatcherTest, BadFileKeepsLastGoodAndShowsWhereItIsWrong) {
  WriteFile(path_, "mode: dry_run\n");
  PolicyWatcher watcher({path_, std::nullopt});
  ASSERT_TRUE(watcher.Start().ok());

  WriteAndRename("mode: dry_run\nstability:\n  dwell_s: soon\n");
  EXPECT_FALSE(Settle(watcher));
  PolicyState state = watcher.state();
  EXPECT_EQ(state.policy->mode(), v1::Policy::MODE_DRY_RUN);
  EXPECT_EQ(state.version, 1u);
  EXPECT_EQ(state.last_error,
            absl::StrCat(path_,
                         ":3:12: expected an integer for stability.dwell_s, "
                         "got \"soon\""));
  EXPECT_GE(state.reloads_rejected, 1u);
  EXPECT_EQ(state.reloads_ok, 0u);

  // A good file replaces it and clears the error.
  WriteAndRename("mode: enforce\n");
  EXPECT_TRUE(Settle(watcher));
  state = watcher.state();
  EXPECT_EQ(state.policy->mode(), v1::Policy::MODE_ENFORCE);
  EXPECT_EQ(state.version, 2u);
  EXPECT_TRUE(state.last_error.empty());
  EXPECT_EQ(state.reloads_ok, 1u);
}

TEST_F(PolicyWatcherTest, InvalidFileAtStartIsAnErrorWithTheDefaultRunning) {
  WriteFile(path_, "mode: fast\nbogus: 1\n");
  PolicyWatcher watcher({path_, std::nullopt});
  absl::Status status = watcher.Start();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              StartsWith(absl::StrCat(path_, ":1:7: unknown mode \"fast\"")));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(absl::StrCat(path_, ":2:1: unknown key \"bogus\"")));
  EXPECT_TRUE(watcher.state().is_default);
  EXPECT_EQ(watcher.policy()->mode(), DefaultPolicy().mode());
}

TEST_F(PolicyWatcherTest, ReloadRereadsWithoutEvents) {
  WriteFile(path_, "mode: dry_run\n");
  PolicyWatcher watcher({path_, std::nullopt});
  ASSERT_TRUE(watcher.Start().ok());
  WriteFile(path_, "mode: enforce\n");
  // As on SIGHUP: no need to wait for inotify.
  EXPECT_TRUE(watcher.Reload());
  EXPECT_EQ(watcher.policy()->mode(), v1::Policy::MODE_ENFORCE);
  // Nothing changed: no new version.
  EXPECT_FALSE(watcher.Reload());
  EXPECT_EQ(watcher.state().version, 2u);
}

TEST_F(PolicyWatcherTest, CommentOnlyChangeKeepsTheVersion) {
  WriteFile(path_, "mode: dry_run\n");
  PolicyWatcher watcher({path_, std::nullopt});
  ASSERT_TRUE(watcher.Start().ok());
  WriteAndRename("# reviewed\nmode: dry_run\n");
  EXPECT_FALSE(Settle(watcher));
  EXPECT_EQ(watcher.state().version, 1u);
}

TEST_F(PolicyWatcherTest, KubernetesConfigMapSymlinkSwap) {
  // dir/policy.yaml -> ..data/policy.yaml, ..data -> ..v1 (as kubelet lays
  // out a ConfigMap volume); an update writes ..v2 and renames a new ..data
  // link over the old one.
  fs::create_directory(dir_ + "/..v1");
  WriteFile(dir_ + "/..v1/policy.yaml", "mode: dry_run\n");
  fs::create_directory_symlink("..v1", dir_ + "/..data");
  fs::create_symlink("..data/policy.yaml", path_);
  PolicyWatcher watcher({path_, std::nullopt});
  ASSERT_TRUE(watcher.Start().ok());
  EXPECT_EQ(watcher.policy()->mode(), v1::Policy::MODE_DRY_RUN);

  fs::create_directory(dir_ + "/..v2");
  WriteFile(dir_ + "/..v2/policy.yaml", "mode: enforce\n");
  fs::create_directory_symlink("..v2", dir_ + "/..data_tmp");
  fs::rename(dir_ + "/..data_tmp", dir_ + "/..data");
  EXPECT_TRUE(Settle(watcher));
  EXPECT_EQ(watcher.policy()->mode(), v1::Policy::MODE_ENFORCE);
}

TEST_F(PolicyWatcherTest, RemovedFileKeepsTheRunningPolicyAndSaysSo) {
  WriteFile(path_, "mode: dry_run\n");
  PolicyWatcher watcher({path_, std::nullopt});
  ASSERT_TRUE(watcher.Start().ok());
  fs::remove(path_);
  EXPECT_FALSE(Settle(watcher));
  PolicyState state = watcher.state();
  EXPECT_EQ(state.policy->mode(), v1::Policy::MODE_DRY_RUN);
  EXPECT_THAT(state.last_error, HasSubstr("removed; still running version 1"));
  // Back again, the same: the note goes, the version stays.
  WriteFile(path_, "mode: dry_run\n");
  EXPECT_FALSE(Settle(watcher));
  EXPECT_TRUE(watcher.state().last_error.empty());
  EXPECT_EQ(watcher.state().version, 1u);
}

TEST_F(PolicyWatcherTest, CpuListsAreCheckedAgainstTheHost) {
  Topology host;
  host.nodes.push_back({0, {0, 1}, 0, 0, {10}});
  host.cpu_node = {0, 0};
  WriteFile(path_, "placement:\n  cpus: \"0-3\"\n");
  PolicyWatcher watcher({path_, host});
  absl::Status status = watcher.Start();
  EXPECT_EQ(status.message(),
            absl::StrCat(path_,
                         ":2:9: CPUs 2-3 not online on this host (online "
                         "CPUs: 0-1)"));
}

TEST_F(PolicyWatcherTest, UnrelatedFilesInTheDirectoryChangeNothing) {
  WriteFile(path_, "mode: dry_run\n");
  PolicyWatcher watcher({path_, std::nullopt});
  ASSERT_TRUE(watcher.Start().ok());
  WriteFile(dir_ + "/notes.txt", "hello");
  EXPECT_FALSE(Settle(watcher));
  EXPECT_EQ(watcher.state().version, 1u);
}

}  // namespace
}  // namespace locus

namespace locus {
namespace {

class PolicyWatcherRefusalTest : public PolicyWatcherTest {
 protected:
  // A good dry_run policy running, then `swap` puts something else at the
  // path; Reload (SIGHUP) must come back at once and keep dry_run.
  void ExpectRefusedAndKept(const std::function<void()>& swap,
                            const std::string& why) {
    WriteFile(path_, "mode: dry_run\n");
    PolicyWatcher watcher({path_, std::nullopt});
    ASSERT_TRUE(watcher.Start().ok());
    swap();
    EXPECT_FALSE(watcher.Reload());
    PolicyState state = watcher.state();
    EXPECT_EQ(state.policy->mode(), v1::Policy::MODE_DRY_RUN);
    EXPECT_FALSE(state.is_default);
    EXPECT_EQ(state.version, 1u);
    EXPECT_EQ(state.last_error, why);
    // Put right, the same good file is taken again and the error cleared.
    fs::remove_all(path_);
    WriteFile(path_, "mode: dry_run\n");
    watcher.Reload();
    EXPECT_TRUE(watcher.state().last_error.empty());
  }
};

TEST_F(PolicyWatcherRefusalTest, FifoSwappedInIsRefusedWithoutBlocking) {
  ExpectRefusedAndKept(
      [this] {
        std::string fifo = dir_ + "/fifo";
        ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
        fs::rename(fifo, path_);
      },
      path_ + ": is a FIFO, not a regular file");
}

// Only an absent file means the built-in default: a directory (whose
// default `mode: enforce` would replace dry_run) is an error.
TEST_F(PolicyWatcherRefusalTest, DirectoryKeepsTheLastGoodPolicy) {
  ExpectRefusedAndKept(
      [this] {
        fs::remove(path_);
        fs::create_directory(path_);
      },
      path_ + ": is a directory, not a regular file");
}

TEST_F(PolicyWatcherRefusalTest, OversizedFileKeepsTheLastGoodPolicy) {
  ExpectRefusedAndKept(
      [this] {
        std::ofstream(path_, std::ios::trunc);
        ASSERT_EQ(truncate(path_.c_str(), 1ll << 30), 0);
      },
      path_ + ": larger than 1048576 bytes (1073741824 or more)");
}

// A link to nothing (here /proc/kcore where the kernel has none; where it
// has one it is too big, or unreadable) is there: not "removed".
TEST_F(PolicyWatcherRefusalTest, ALinkToNothingIsNotARemovedFile) {
  ExpectRefusedAndKept(
      [this] {
        fs::remove(path_);
        fs::create_symlink(dir_ + "/nowhere", path_);
      },
      path_ + ": a symbolic link to " + dir_ + "/nowhere, which names nothing");
}

TEST_F(PolicyWatcherRefusalTest, ALinkToProcKcoreIsRefusedNotRemoved) {
  WriteFile(path_, "mode: dry_run\n");
  PolicyWatcher watcher({path_, std::nullopt});
  ASSERT_TRUE(watcher.Start().ok());
  fs::remove(path_);
  fs::create_symlink("/proc/kcore", path_);
  watcher.Reload();
  PolicyState state = watcher.state();
  EXPECT_THAT(state.last_error, StartsWith(path_ + ": "));
  EXPECT_THAT(state.last_error, Not(HasSubstr("removed")));
  EXPECT_EQ(state.policy->mode(), v1::Policy::MODE_DRY_RUN);
  EXPECT_EQ(state.version, 1u);
}

// Logs of one watcher's start, kept for a test to read.
class CapturedLog : public LogSink {
 public:
  CapturedLog() { SetLogSink(this); }
  ~CapturedLog() override { SetLogSink(nullptr); }
  void Write(const LogEntry& entry) override {
    std::lock_guard<std::mutex> lock(mu_);
    text_ += entry.message + "\n";
  }
  std::string text() {
    std::lock_guard<std::mutex> lock(mu_);
    return text_;
  }

 private:
  std::mutex mu_;
  std::string text_;
};

// The error says what is there, and nothing says "absent": the default
// in force says why it is.
TEST_F(PolicyWatcherRefusalTest, FifoAtStartIsAnErrorNeverAbsent) {
  ASSERT_EQ(mkfifo(path_.c_str(), 0600), 0);
  CapturedLog log;
  PolicyWatcher watcher({path_, std::nullopt});
  absl::Status status = watcher.Start();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), path_ + ": is a FIFO, not a regular file");
  PolicyState state = watcher.state();
  EXPECT_TRUE(state.is_default);
  EXPECT_EQ(state.source,
            "built-in default (" + path_ + ": is a FIFO, not a regular file)");
  EXPECT_THAT(log.text(), Not(HasSubstr("absent")));
}

TEST_F(PolicyWatcherRefusalTest, AnInvalidFileAtStartIsNeverAbsent) {
  WriteFile(path_, "mode: sideways\n");
  CapturedLog log;
  PolicyWatcher watcher({path_, std::nullopt});
  EXPECT_FALSE(watcher.Start().ok());
  EXPECT_EQ(watcher.state().source,
            "built-in default (" + path_ + " rejected)");
  EXPECT_THAT(log.text(), Not(HasSubstr("absent")));
}

// The time each version came into force, for status ("loaded ...").
TEST_F(PolicyWatcherTest, RecordsWhenEachVersionWasLoaded) {
  WriteFile(path_, "mode: dry_run\n");
  PolicyWatcher watcher({path_, std::nullopt});
  int64_t before = absl::ToUnixNanos(absl::Now());
  ASSERT_TRUE(watcher.Start().ok());
  int64_t first = watcher.state().loaded_unix_ns;
  EXPECT_GE(first, before);
  EXPECT_LE(first, absl::ToUnixNanos(absl::Now()));
  // A comment changes nothing in force: same version, same time.
  WriteFile(path_, "# note\nmode: dry_run\n");
  watcher.Reload();
  EXPECT_EQ(watcher.state().loaded_unix_ns, first);
  WriteFile(path_, "mode: enforce\n");
  ASSERT_TRUE(watcher.Reload());
  EXPECT_EQ(watcher.state().version, 2u);
  EXPECT_GE(watcher.state().loaded_unix_ns, first);
}

// A rejected megabyte keeps a small error: it is copied into every tick.
TEST_F(PolicyWatcherTest, HugeBadFileKeepsASmallError) {
  WriteFile(path_, "mode: dry_run\n");
  PolicyWatcher watcher({path_, std::nullopt});
  ASSERT_TRUE(watcher.Start().ok());
  std::string text;
  for (int i = 0; text.size() < 1000000; ++i) {
    absl::StrAppend(&text, "bogus_", i, ": 1\n");
  }
  WriteFile(path_, text);
  EXPECT_FALSE(watcher.Reload());
  EXPECT_LT(watcher.state().last_error.size(), 16u * 1024);
  EXPECT_THAT(watcher.state().last_error, HasSubstr("more error(s) not shown"));
}

}  // namespace
}  // namespace locus
