// `locusd --doctor` and `locusctl doctor` as programs on this machine: their
// lines must say what this host really is (root, its BTF, its nodes).
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/locusd_process.h"
#include "tests/common/test_paths.h"

namespace locus {
namespace {

using testing::HasSubstr;
using testing::Not;

struct Outcome {
  int code = -1;
  std::string out;
};

Outcome Capture(const std::string& command) {
  Outcome r;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

int NodesOnThisHost() {
  int nodes = 0;
  for (const auto& e :
       std::filesystem::directory_iterator("/sys/devices/system/node")) {
    std::string name = e.path().filename();
    if (name.rfind("node", 0) == 0 && name.size() > 4 &&
        isdigit(static_cast<unsigned char>(name[4]))) {
      ++nodes;
    }
  }
  return nodes;
}

class DoctorPrivileged : public testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: the BPF probe";
    dir_ = testing::TempDir() + "doctor-priv-" + std::to_string(getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // A private policy and journal, so that the host's own do not matter.
  std::string Flags() const {
    return absl::StrCat(" --policy=", dir_, "/policy.yaml --journal=", dir_,
                        "/journal 2>&1");
  }
  std::string dir_;
};

TEST_F(DoctorPrivileged, LocusdDoctorSaysWhatThisHostIs) {
  Outcome r = Capture(absl::StrCat(LOCUSD_PATH, " --doctor", Flags()));
  EXPECT_THAT(r.out, HasSubstr("OK    capabilities: running as root"));
  if (std::filesystem::exists("/sys/kernel/btf/vmlinux")) {
    EXPECT_THAT(r.out, HasSubstr("OK    btf: /sys/kernel/btf/vmlinux present"));
    // With BTF and root, the probe runs and names each sensor's source.
    EXPECT_THAT(r.out, HasSubstr("bpf: sensors: sched on "));
  } else {
    EXPECT_THAT(r.out, HasSubstr("WARN  btf: "));
  }
  int nodes = NodesOnThisHost();
  if (nodes == 1) {
    EXPECT_THAT(r.out, HasSubstr("WARN  numa: 1 NUMA node: nothing to place"));
  } else {
    EXPECT_THAT(r.out,
                HasSubstr(absl::StrCat("OK    numa: ", nodes, " NUMA nodes")));
  }
  EXPECT_THAT(r.out, HasSubstr("OK    policy: no file at " + dir_));
  EXPECT_THAT(r.out, HasSubstr("OK    journal: " + dir_ + "/journal writable"));
  EXPECT_THAT(r.out, HasSubstr("OK    instance: "));
  EXPECT_THAT(r.out, Not(HasSubstr("agent:")));  // locusctl's line only
  // The exit code follows the lines.
  EXPECT_EQ(r.code, r.out.find("FAIL  ") == std::string::npos ? 0 : 1) << r.out;
}

TEST_F(DoctorPrivileged, BadPolicyFailsWithItsLocation) {
  FILE* f = fopen((dir_ + "/policy.yaml").c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("version: 1\nmdoe: enforce\n", f);
  fclose(f);
  Outcome r = Capture(absl::StrCat(LOCUSD_PATH, " --doctor", Flags()));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("FAIL  policy: " + dir_ + "/policy.yaml:2:1"));
  EXPECT_THAT(r.out, HasSubstr("fix: fix the file; `locusctl policy check"));
}

TEST_F(DoctorPrivileged, LocusctlDoctorAddsTheAgentLine) {
  Outcome r = Capture(absl::StrCat(LOCUSCTL_PATH, " --socket=", dir_,
                                   "/none.sock doctor 2>&1"));
  EXPECT_THAT(r.out, HasSubstr("OK    capabilities: running as root"));
  EXPECT_THAT(r.out, HasSubstr("WARN  agent: no locusd answers on " + dir_ +
                               "/none.sock"));
  EXPECT_EQ(r.code, r.out.find("FAIL  ") == std::string::npos ? 0 : 1) << r.out;
}

// Asked through a running agent, the doctor checks that agent's journal and
// says the lock on it is the agent's own: no "a locusd is running" warning
// about the agent it asked.
TEST_F(DoctorPrivileged, LocusctlDoctorThroughTheAgentDoesNotWarnAboutIt) {
  LocusdProcess daemon(LOCUSD_PATH, dir_);
  daemon.Start({"--mode=dry_run"});
  ASSERT_TRUE(daemon.WaitReady()) << daemon.log();
  Outcome r = Capture(absl::StrCat(LOCUSCTL_PATH, " --socket=", daemon.socket(),
                                   " doctor 2>&1"));
  EXPECT_THAT(r.out,
              HasSubstr("OK    agent: locusd answers on " + daemon.socket()));
  EXPECT_THAT(r.out,
              HasSubstr("OK    instance: the journal is held by the locusd "
                        "that answers on " +
                        daemon.socket()));
  EXPECT_THAT(r.out, Not(HasSubstr("a locusd is running")));
  EXPECT_THAT(r.out, HasSubstr("OK    journal: " + daemon.journal()));
  EXPECT_EQ(daemon.Stop(SIGTERM), 0) << daemon.log();
}

}  // namespace
}  // namespace locus
