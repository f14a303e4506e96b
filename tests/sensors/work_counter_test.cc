// The work sensor's /proc side over fixture trees made in a temp dir: CPU
// time summed over threads' schedstat, the stat fallback, vanished, zombie
// and reused pids, malformed files, and the procfs fallback counter.
#include "agent/sensors/work_counter.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "agent/sensors/fake_work_counter.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

namespace fs = std::filesystem;

// A /proc/PID/stat line: comm with a space and a ')' (nginx's is plainer),
// the given state, utime (14), stime (15) and start time (22).
std::string StatLine(int32_t pid, char state, uint64_t utime, uint64_t stime,
                     uint64_t start_time) {
  std::string line = absl::StrCat(pid, " (ng x) y) ", std::string(1, state));
  for (int field = 4; field <= 52; ++field) {
    uint64_t value = field == 14   ? utime
                     : field == 15 ? stime
                     : field == 22 ? start_time
                     : field == 20 ? 1
                                   : 0;
    absl::StrAppend(&line, " ", value);
  }
  return line + "\n";
}

uint64_t NsPerTick() { return 1000000000ull / sysconf(_SC_CLK_TCK); }

class WorkProcTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            absl::StrCat(
                "locus_work_test_", getpid(), "_",
                testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const std::string& rel, const std::string& text) {
    fs::path path = root_ / rel;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  // A process with threads `tids` whose schedstat run times are `run_ns`
  // (an entry < 0: that thread has no schedstat file).
  void Process(int32_t pid, std::vector<int32_t> tids,
               std::vector<int64_t> run_ns, uint64_t start_time = 500,
               char state = 'S') {
    Write(absl::StrCat(pid, "/stat"), StatLine(pid, state, 7, 3, start_time));
    for (size_t i = 0; i < tids.size(); ++i) {
      std::string dir = absl::StrCat(pid, "/task/", tids[i]);
      fs::create_directories(root_ / dir);
      if (run_ns[i] >= 0) {
        Write(dir + "/schedstat", absl::StrCat(run_ns[i], " 2000 17\n"));
        Write(dir + "/status",
              absl::StrCat("Name:\tnginx\nvoluntary_ctxt_switches:\t", 10 + i,
                           "\nnonvoluntary_ctxt_switches:\t", 3, "\n"));
      }
    }
  }
  void Io(int32_t pid, uint64_t wchar) {
    Write(absl::StrCat(pid, "/io"),
          absl::StrCat("rchar: 10\nwchar: ", wchar,
                       "\nsyscr: 1\nsyscw: 2\nread_bytes: 0\n"));
  }
  std::string root() const { return root_.string(); }

  fs::path root_;
};

TEST(WorkParseTest, IoWchar) {
  EXPECT_EQ(*ParseIoWchar("rchar: 1\nwchar: 4096\nsyscr: 3\n"), 4096u);
  EXPECT_FALSE(ParseIoWchar("rchar: 1\n").ok());
  EXPECT_FALSE(ParseIoWchar("wchar: lots\n").ok());
}

TEST_F(WorkProcTest, SumsSchedstatOverThreads) {
  Process(100, {100, 101, 102}, {1000, 20000, 300000});
  absl::StatusOr<ProcessCpu> cpu = ReadProcessCpu(root(), 100);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ(cpu->cpu_ns, 321000u);
  EXPECT_EQ(cpu->start_time, 500u);
  EXPECT_EQ(cpu->wait_ns, 6000u);  // 2000 per thread
  EXPECT_EQ(cpu->voluntary_switches, 10u + 11u + 12u);
  EXPECT_EQ(cpu->involuntary_switches, 9u);
}

TEST_F(WorkProcTest, ThreadWithoutSchedstatIsLeftOut) {
  // Listed, then gone before its file was read.
  Process(100, {100, 101}, {1000, -1});
  EXPECT_EQ(ReadProcessCpu(root(), 100)->cpu_ns, 1000u);
}

TEST_F(WorkProcTest, FallsBackToStatTicks) {
  Process(100, {100, 101}, {-1, -1});  // no schedstat anywhere
  absl::StatusOr<ProcessCpu> cpu = ReadProcessCpu(root(), 100);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ(cpu->cpu_ns, 10 * NsPerTick());  // utime 7 + stime 3
}

TEST_F(WorkProcTest, VanishedAndZombieAreNotFound) {
  EXPECT_TRUE(absl::IsNotFound(ReadProcessCpu(root(), 4242).status()));
  Process(100, {100}, {1000}, 500, 'Z');
  EXPECT_TRUE(absl::IsNotFound(ReadProcessCpu(root(), 100).status()));
  EXPECT_TRUE(absl::IsNotFound(ReadProcessWchar(root(), 4242).status()));
}

TEST_F(WorkProcTest, MalformedFilesAreErrorsNamingTheFile) {
  Process(100, {100}, {1000});
  Write("100/task/100/schedstat", "not a number\n");
  absl::StatusOr<ProcessCpu> cpu = ReadProcessCpu(root(), 100);
  ASSERT_FALSE(cpu.ok());
  EXPECT_NE(cpu.status().message().find("100/task/100/schedstat"),
            absl::string_view::npos)
      << cpu.status();

  Process(100, {100}, {1000});
  Write("100/task/100/status", "Name:\tnginx\nvoluntary_ctxt_switches:\t1\n");
  cpu = ReadProcessCpu(root(), 100);
  ASSERT_FALSE(cpu.ok());
  EXPECT_NE(cpu.status().message().find("100/task/100/status"),
            absl::string_view::npos)
      << cpu.status();

  Write("100/stat", "100 (nginx");  // truncated
  cpu = ReadProcessCpu(root(), 100);
  ASSERT_FALSE(cpu.ok());
  EXPECT_FALSE(absl::IsNotFound(cpu.status()));
  EXPECT_NE(cpu.status().message().find("100/stat"), absl::string_view::npos);

  Write("100/io", "");
  EXPECT_FALSE(ReadProcessWchar(root(), 100).ok());
}

TEST_F(WorkProcTest, WatchedSetLeavesOutDeadAndNoticesReuse) {
  Process(100, {100}, {1000}, 500);
  Process(200, {200}, {2000}, 600);
  WatchedProcesses watched(root());
  absl::StatusOr<WatchedProcesses::Change> change =
      watched.Replace({100, 200, 300});  // 300 is not alive
  ASSERT_TRUE(change.ok()) << change.status();
  EXPECT_EQ(change->added, (std::vector<int32_t>{100, 200}));
  EXPECT_TRUE(change->dropped.empty());

  auto cpu = watched.ReadCpu();
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(cpu->size(), 2u);
  EXPECT_EQ(cpu->at(200).cpu_ns, 2000u);

  // 200 exits and its pid goes to another process: absent, not the old one.
  Process(200, {200}, {5}, 900);
  cpu = watched.ReadCpu();
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(cpu->count(200), 0u);
  // Watching it again starts over; 100 is unchanged.
  change = watched.Replace({100, 200});
  ASSERT_TRUE(change.ok());
  EXPECT_EQ(change->dropped, (std::vector<int32_t>{200}));
  EXPECT_EQ(change->added, (std::vector<int32_t>{200}));
  // 100 dropped from the set.
  change = watched.Replace({200});
  ASSERT_TRUE(change.ok());
  EXPECT_EQ(change->dropped, (std::vector<int32_t>{100}));
  EXPECT_TRUE(change->added.empty());

  fs::remove_all(root_ / "200");
  cpu = watched.ReadCpu();
  ASSERT_TRUE(cpu.ok());
  EXPECT_TRUE(cpu->empty());
}

TEST_F(WorkProcTest, ProcfsCounterCountsWcharSinceWatched) {
  Process(100, {100, 101}, {1000, 500});
  Io(100, 10000);
  std::unique_ptr<WorkCounter> counter =
      MakeProcfsWorkCounter({root(), true}, "bpf disabled");
  EXPECT_EQ(counter->source(),
            absl::StrCat(kWorkSourceProcfs, "; bpf disabled"));
  EXPECT_EQ(counter->service_source(),
            absl::StrCat("none: service times need the bpf work source (",
                         kWorkSourceProcfs, "; bpf disabled)"));
  ASSERT_TRUE(counter->Watch({100, 4242}).ok());

  Io(100, 12500);
  Process(100, {100, 101}, {3000, 500});
  auto read = counter->Read();
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 1u);
  // Waits and switches: two threads' (2000 ns, 10 + 11 and 3 + 3).
  EXPECT_EQ(read->at(100), (WorkSample{2500, 0, 3500, 4000, 21, 6}));

  // Kept in a new set: keeps its baseline.
  ASSERT_TRUE(counter->Watch({100}).ok());
  EXPECT_EQ(counter->Read()->at(100).bytes_sent, 2500u);

  Write("100/io", "garbage\n");
  EXPECT_FALSE(counter->Read().ok());

  counter->Stop();
  read = counter->Read();
  ASSERT_TRUE(read.ok());
  EXPECT_TRUE(read->empty());
}

TEST(FakeWorkCounterTest, ReportsWatchedPidsWithSamples) {
  FakeWorkCounter fake;
  fake.Set(1, {10, 1, 100});
  fake.Set(2, {20, 2, 200});
  ASSERT_TRUE(fake.Watch({1, 3}).ok());
  auto read = fake.Read();
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ(read->at(1), (WorkSample{10, 1, 100}));
  fake.FailRead(absl::UnavailableError("x"));
  EXPECT_FALSE(fake.Read().ok());
  fake.Stop();
  EXPECT_EQ(fake.stops(), 1);
  EXPECT_TRUE(fake.watched().empty());
}

}  // namespace
}  // namespace locus
