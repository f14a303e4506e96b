#include "agent/act/neighbours/host_tuners.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::HasSubstr;

class HostTunersTest : public ::testing::Test {
 protected:
  void Write(const std::string& path, const std::string& text) {
    const std::string full = tree_.root() + path;
    std::filesystem::create_directories(
        std::filesystem::path(full).parent_path());
    std::ofstream(full) << text;
  }
  // A process as /proc shows it: its stat line names it.
  void Process(int pid, const std::string& comm, char state = 'S') {
    Write("/proc/" + std::to_string(pid) + "/stat",
          std::to_string(pid) + " (" + comm + ") " + state +
              " 1 41 41 0 -1 4194560 101 0 0 0 5 7 0 0 20 0 1 0 8649819 "
              "3133440 390 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 "
              "0 0 0 0 0 1 1 1 1 1 1 1 0\n");
  }
  HostTunerPaths Paths() {
    return {tree_.root() + "/proc", tree_.root() + "/etc/tuned/active_profile"};
  }

  TempTree tree_;
  absl::Time now_ = absl::FromUnixSeconds(1000000);
};

TEST_F(HostTunersTest, SaysWhatAutonumaAndTunedDoHere) {
  Process(640, "tuned");
  Process(641, "tuned-ppd");
  Write("/etc/tuned/active_profile", "throughput-performance\n");
  HostTuners tuners(Paths());
  tuners.Tick(now_, 1);
  EXPECT_EQ(tuners.state().numa_balancing, 1);
  EXPECT_EQ(tuners.state().tuned_pid, 640);
  EXPECT_EQ(tuners.state().tuned_profile, "throughput-performance");
  EXPECT_THAT(tuners.AutonumaNote(),
              HasSubstr("on (kernel.numa_balancing=1): it moves pages toward "
                        "the threads that touch them"));
  EXPECT_THAT(tuners.TunedNote(),
              HasSubstr("profile 'throughput-performance': a profile may set "
                        "kernel.numa_balancing or restart irqbalance"));
}

// kernel.numa_balancing comes with each tick's snapshot (read once there);
// /proc is scanned for tuned only every look interval.
TEST_F(HostTunersTest, TakesAutonumaEachTickAndLooksForTunedEveryInterval) {
  HostTuners tuners(Paths());
  tuners.Tick(now_, 0);
  EXPECT_EQ(tuners.state().numa_balancing, 0);
  EXPECT_THAT(tuners.AutonumaNote(), HasSubstr("off"));
  EXPECT_THAT(tuners.TunedNote(), "not running");
  Process(700, "tuned");
  tuners.Tick(now_ + absl::Seconds(1), 2);
  EXPECT_EQ(tuners.state().numa_balancing, 2);
  // Mode 2 is tiering alone: promotion from lower tiers, no NUMA balancing.
  EXPECT_THAT(tuners.AutonumaNote(),
              HasSubstr("memory tiering only (kernel.numa_balancing=2): it "
                        "promotes hot pages from lower memory tiers"));
  EXPECT_EQ(tuners.state().tuned_pid, 0);  // not looked for yet
  // A tick without a snapshot keeps the last value.
  tuners.Tick(now_ + absl::Seconds(2), std::nullopt);
  EXPECT_EQ(tuners.state().numa_balancing, 2);
  tuners.Tick(now_ + kHostTunersLookInterval, 2);
  EXPECT_EQ(tuners.state().tuned_pid, 700);
  Process(700, "tuned", 'Z');  // a zombie is not running
  tuners.Tick(now_ + 2 * kHostTunersLookInterval, 2);
  EXPECT_EQ(tuners.state().tuned_pid, 0);
}

TEST_F(HostTunersTest, UnreadableValuesAreSaidNotGuessed) {
  Process(640, "tuned");  // and no active_profile file
  HostTuners tuners(Paths());
  tuners.Tick(now_, -1);
  EXPECT_EQ(tuners.state().numa_balancing, -1);
  EXPECT_EQ(tuners.AutonumaNote(), "kernel.numa_balancing unreadable");
  EXPECT_THAT(tuners.TunedNote(), HasSubstr("an unknown profile"));
}

// The profile is a file's first line: quoted escaped and cut, the same
// sentence in status and in the doctor.
TEST_F(HostTunersTest, TheProfileIsQuotedEscapedAndCut) {
  Process(640, "tuned");
  Write("/etc/tuned/active_profile", "bal\x1b[2J" + std::string(500, 'x'));
  HostTuners tuners(Paths());
  tuners.Tick(now_, 0);
  const std::string note = tuners.TunedNote();
  EXPECT_EQ(note.find('\x1b'), std::string::npos) << note;
  EXPECT_THAT(note, HasSubstr("profile 'bal\\x1b[2J"));
  EXPECT_THAT(note, HasSubstr("bytes)': a profile may set"));
  EXPECT_LT(note.size(), kMaxTunedProfileBytes + 200);
  EXPECT_EQ(note, TunedSentence(tuners.state().tuned_profile));
}

}  // namespace
}  // namespace locus
