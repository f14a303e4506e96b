// A real look-alike (root): a copy of sleep(1) whose name the policy selects,
// owned by and running as nobody. locusd leaves it alone, says so in its log
// once (not every tick), and `locusctl explain PID` gives the reason; the
// same copy owned by and run as root is a target. A look-alike in a
// directory whose name holds a newline and an escape sequence shows up
// escaped in the log, in explain and in the doctor.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/agent_test_util.h"
#include "tests/common/locusd_process.h"
#include "tests/common/process_util.h"
#include "tests/common/test_paths.h"

namespace locus {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A name of this test's own: other tests' daemons and targets run meanwhile.
constexpr char kComm[] = "lookalike-expl";

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

class LookAlikeExplainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0)
      GTEST_SKIP() << "locusd and running as nobody need root";
    // nobody must reach its binary.
    ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
    std::ofstream(daemon_.policy()) << FaultPolicy(kComm, "dry_run", 8);
  }
  void TearDown() override {
    for (pid_t pid : started_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  // A copy of sleep(1) named kComm in `sub`, owned by `uid`, run as `uid`
  // with a worker's title; its pid.
  pid_t StartCopy(const std::string& sub, uid_t uid) {
    std::filesystem::create_directories(dir_.File(sub));
    const std::string binary = dir_.File(sub + "/" + kComm);
    std::filesystem::copy_file("/bin/sleep", binary);
    EXPECT_EQ(chown(binary.c_str(), uid, uid), 0);
    EXPECT_EQ(chmod(binary.c_str(), 0755), 0);
    pid_t pid = fork();
    if (pid == 0) {
      if (setgid(uid) != 0 || setuid(uid) != 0) _exit(126);
      std::string title = absl::StrCat(kComm, ": worker process");
      char seconds[] = "60";
      char* argv[] = {title.data(), seconds, nullptr};
      execv(binary.c_str(), argv);
      _exit(127);
    }
    started_.push_back(pid);
    return pid;
  }
  // `locusctl explain PID` until `done` holds for its result (or 20 s).
  ProcessResult ExplainUntil(
      pid_t pid, const std::function<bool(const ProcessResult&)>& done) {
    ProcessResult r;
    WaitUntil(
        [&] {
          r = RunProcess({LOCUSCTL_PATH, "--socket=" + daemon_.socket(),
                          "explain", absl::StrCat(pid)});
          return done(r);
        },
        absl::Seconds(20), absl::Milliseconds(100));
    return r;
  }

  TempDir dir_;
  LocusdProcess daemon_{LOCUSD_PATH, dir_.path()};
  std::vector<pid_t> started_;
};

TEST_F(LookAlikeExplainTest, ExplainAndTheLogSayWhyItIsNotATarget) {
  daemon_.Start({});
  ASSERT_TRUE(daemon_.WaitReady()) << daemon_.log();
  const pid_t fake = StartCopy("user", 65534);
  ProcessResult r = ExplainUntil(fake, [](const ProcessResult& r) {
    return absl::StrContains(r.err, "not trusted");
  });
  EXPECT_EQ(r.exit_code, 1) << "as for any process that is not a target";
  const std::string why = absl::StrCat(
      "pid ", fake, " (", kComm, "): not trusted as a target: its executable ",
      dir_.File("user/"), kComm, " is owned by uid 65534, not root");
  EXPECT_THAT(r.err, HasSubstr(why)) << r.err;

  absl::SleepFor(absl::Seconds(1));  // ten more ticks
  EXPECT_EQ(Count(daemon_.log(), why), 1u) << daemon_.log();

  const pid_t real = StartCopy("root", 0);
  r = ExplainUntil(real,
                   [](const ProcessResult& r) { return r.exit_code == 0; });
  EXPECT_EQ(r.exit_code, 0) << r.err << daemon_.log();
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("thread ", real, " (", kComm)));
}

// Whether `text` shows the look-alike's path only escaped: no ESC, and its
// forged line only inside the line that says why it is refused.
void ExpectInert(const std::string& text, const std::string& escaped) {
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_THAT(text, HasSubstr(escaped)) << text;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StrContains(line, "everything restored")) {
      EXPECT_THAT(std::string(line), HasSubstr(escaped));
      EXPECT_THAT(std::string(line), HasSubstr("not trusted as a target"));
    }
    EXPECT_FALSE(absl::StartsWith(line, "MESSAGE_ID=")) << line;
  }
}

// The look-alike: its directory's name holds a newline, a screen
// clear and a forged journal line. The text log, `locusctl explain` and
// `locusd --doctor` show the name escaped, on the line that says why it is
// refused; none of it reaches the terminal or starts a line of its own.
TEST_F(LookAlikeExplainTest, ANameWithEscapesCannotForgeOutput) {
  const std::string forged =
      "esc\n\x1b[2J\nMESSAGE_ID=cf9be3c65a5b481c9480b1caca005f50 "
      "everything restored; bye";
  const std::string escaped = absl::StrCat(
      "esc\\n\\x1b[2J\\nMESSAGE_ID=cf9be3c65a5b481c9480b1caca005f50 "
      "everything restored; bye/",
      kComm, " is owned by uid 65534");
  daemon_.Start({});
  ASSERT_TRUE(daemon_.WaitReady()) << daemon_.log();
  const pid_t fake = StartCopy(forged, 65534);
  ProcessResult r = ExplainUntil(fake, [](const ProcessResult& r) {
    return absl::StrContains(r.err, "not trusted");
  });
  EXPECT_EQ(r.exit_code, 1);
  ExpectInert(r.err, escaped);
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;

  WaitUntil([&] { return absl::StrContains(daemon_.log(), escaped); },
            absl::Seconds(10), absl::Milliseconds(100));
  ExpectInert(daemon_.log(), escaped);

  ProcessResult doctor =
      RunProcess({LOCUSD_PATH, "--doctor", "--policy=" + daemon_.policy(),
                  "--journal=" + dir_.File("doctor/journal")});
  ExpectInert(doctor.out, escaped);
  EXPECT_THAT(doctor.out, HasSubstr("WARN  refused: "));
  EXPECT_THAT(doctor.out, HasSubstr(absl::StrCat("pid ", fake, " (", kComm,
                                                 "): not trusted")));
  EXPECT_THAT(doctor.out, Not(HasSubstr(absl::StrCat("nginx ", fake))))
      << "a look-alike is not an instance to tune";
}

// A real target whose name holds an escape and a newline (fault_target names
// itself with prctl): the reasons of the decisions about it name it escaped
// where they are made, so the metrics stream carries them escaped, and
// `locusctl explain` and the text log show them escaped, each on one line.
TEST_F(LookAlikeExplainTest, AReasonNamesATargetEscaped) {
  const std::string comm = "lcs\x1b[2J\nw";
  const std::string escaped = "lcs\\x1b[2J\\nw";
  // YAML's double quotes: \e is ESC.
  std::ofstream(daemon_.policy())
      << FaultPolicy("\"lcs\\e[2J\\nw\"", "enforce", 8);
  TargetFamily family(FAULT_TARGET_PATH, comm, 2, 2, dir_.File("family.log"));
  ASSERT_TRUE(family.ok());
  daemon_.Start({});
  ASSERT_TRUE(daemon_.WaitReady()) << daemon_.log();
  auto pinned = daemon_.WatchUntil(
      [](const v1::Metrics& m) { return m.actions_size() > 0; },
      absl::Seconds(30));
  ASSERT_TRUE(pinned.ok()) << pinned.status() << daemon_.log();
  for (const v1::Action& a : pinned->actions()) {
    EXPECT_THAT(a.reason(), HasSubstr("(" + escaped)) << a.reason();
    EXPECT_EQ(a.reason().find_first_of("\x1b\n"), std::string::npos)
        << a.reason();
  }
  const pid_t worker = family.workers().front();
  ProcessResult r = ExplainUntil(worker, [&](const ProcessResult& r) {
    return absl::StrContains(r.out, escaped);
  });
  EXPECT_THAT(r.out, HasSubstr("(" + escaped)) << r.out << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_THAT(daemon_.log(), HasSubstr("(" + escaped)) << daemon_.log();
  EXPECT_EQ(daemon_.log().find('\x1b'), std::string::npos) << daemon_.log();
  EXPECT_EQ(daemon_.Stop(SIGTERM), 0) << daemon_.log();
}

}  // namespace
}  // namespace locus
