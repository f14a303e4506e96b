// Which selected processes may be targets, on fixture /proc trees: a
// look-alike of nginx (its name and title, a binary of its own) is refused
// with the reason; the systemd unit the policy names vouches for its own.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "agent/host/proc_parse.h"
#include "agent/host/targets.h"
#include "agent/host/topology.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class TargetTrustTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.CopyFixture("numa2");
    paths_ = {tree_.root() + "/sys", tree_.root() + "/proc"};
    auto topology = ReadTopology(paths_.sysfs_root);
    ASSERT_TRUE(topology.ok());
    topology_ = *std::move(topology);
    options_.read_numa_maps = false;
  }
  // A process of the fixture's nginx shape: `exe` its binary, `uid` who
  // started it, `cgroup` its cgroup path.
  void AddProcess(int pid, int ppid, const std::string& exe, int uid,
                  const std::string& cgroup, const std::string& title) {
    const std::string dir = "proc/" + std::to_string(pid);
    const std::string stat = std::to_string(pid) + " (nginx) S " +
                             std::to_string(ppid) +
                             " 1 1 0 -1 4194560 100 0 0 0 12 3 0 0 20 0 1 0 "
                             "1200 12345678 1234 -1 0 0 0 0 0 0 0 0 0 0 0 0 "
                             "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
    tree_.Write(dir + "/comm", "nginx\n");
    tree_.Write(dir + "/task/" + std::to_string(pid) + "/stat", stat);
    tree_.Write(dir + "/cmdline", title + std::string(1, '\0'));
    tree_.Write(dir + "/cgroup", "0::" + cgroup + "\n");
    const std::string ids = std::to_string(uid);
    const std::string status = "Name:\tnginx\nPPid:\t" + std::to_string(ppid) +
                               "\nUid:\t" + ids + "\t" + ids + "\t" + ids +
                               "\t" + ids + "\nCpus_allowed_list:\t0-1\n";
    tree_.Write(dir + "/status", status);
    tree_.Write(dir + "/task/" + std::to_string(pid) + "/status", status);
    std::filesystem::create_symlink(exe, tree_.root() + "/" + dir + "/exe");
  }
  // A binary of the user's own: in the tree, owned by nobody when this runs
  // as root (else by whoever runs it, not root either).
  std::string UserBinary() {
    const std::string path = tree_.root() + "/home/nginx";
    tree_.Write("home/nginx", "#!/bin/true\n");
    chmod(path.c_str(), 0755);
    if (geteuid() == 0) {
      EXPECT_EQ(chown(path.c_str(), 65534, 65534), 0);
    }
    return path;
  }
  std::map<int32_t, std::string> Refused() {
    std::vector<std::string> errors;
    std::vector<RefusedTarget> refused;
    auto targets =
        ScanTargets(paths_, options_, topology_, &errors, nullptr, &refused);
    EXPECT_TRUE(targets.ok());
    pids_.clear();
    for (const Target& t : *targets) pids_.push_back(t.pid);
    std::map<int32_t, std::string> out;
    for (const RefusedTarget& r : refused) out[r.pid] = r.reason;
    return out;
  }
  TempTree tree_;
  HostPaths paths_;
  Topology topology_;
  TargetScanOptions options_;
  std::vector<int32_t> pids_;  // the targets of the last Refused()
};

TEST_F(TargetTrustTest, TheFixturesNginxIsTrusted) {
  EXPECT_THAT(Refused(), IsEmpty());
  EXPECT_THAT(pids_, ElementsAre(100, 101, 102, 104));
}

TEST_F(TargetTrustTest, LookAlikeFromAUserBinaryIsRefused) {
  AddProcess(500, 1, UserBinary(), 1000,
             "/user.slice/user-1000.slice/session-2.scope",
             "nginx: worker process");
  auto refused = Refused();
  ASSERT_EQ(refused.count(500), 1u);
  EXPECT_THAT(refused[500], HasSubstr("not trusted as a target: its "
                                      "executable " +
                                      tree_.root() + "/home/nginx"));
  EXPECT_THAT(refused[500], HasSubstr("not root"));
  EXPECT_THAT(pids_, ElementsAre(100, 101, 102, 104));
}

TEST_F(TargetTrustTest, WritableByOthersIsRefused) {
  const std::string path = UserBinary();
  if (geteuid() != 0) GTEST_SKIP() << "only root can make a root-owned file";
  ASSERT_EQ(chown(path.c_str(), 0, 0), 0);
  chmod(path.c_str(), 0775);
  AddProcess(500, 1, path, 0, "/system.slice/x.service", "nginx: master");
  EXPECT_THAT(Refused()[500], HasSubstr("may be written by group or others"));
}

// The real nginx binary started by a user (their own config, as nobody):
// the master is refused, and its workers with it.
TEST_F(TargetTrustTest, RootBinaryStartedByAUserIsRefused) {
  AddProcess(500, 1, "/usr/sbin/nginx", 65534, "/user.slice/u.scope",
             "nginx: master process");
  AddProcess(501, 500, "/usr/sbin/nginx", 65534, "/user.slice/u.scope",
             "nginx: worker process");
  auto refused = Refused();
  EXPECT_THAT(refused[500], HasSubstr("pid 500 was started by uid 65534"));
  EXPECT_THAT(refused[501], HasSubstr("(its master is pid 500)"));
  EXPECT_THAT(pids_, ElementsAre(100, 101, 102, 104));
}

TEST_F(TargetTrustTest, TheNamedUnitVouchesForItsProcesses) {
  const std::string binary = UserBinary();
  AddProcess(500, 1, binary, 33, "/system.slice/nginx.service",
             "nginx: master process");
  AddProcess(600, 1, binary, 33, "/user.slice/u.scope",
             "nginx: master process");
  options_.trust.systemd_unit = "nginx.service";
  auto refused = Refused();
  EXPECT_EQ(refused.count(500), 0u);
  EXPECT_THAT(refused[600], HasSubstr("; and it is not in nginx.service"));
  EXPECT_THAT(pids_, ElementsAre(100, 101, 102, 104, 500));
}

// The policy's unit is the system manager's: under any slice, sub-cgroups
// included. A cgroup of the same name anywhere else (a user's `systemd-run
// --user --unit=nginx.service`, another unit's subtree, a container, a path
// outside locusd's cgroup namespace) or of a name ending the same vouches
// for nothing, and explain says why. Every process here runs a binary of
// nobody's, as nobody: only the unit could make it a target.
TEST_F(TargetTrustTest, OnlyTheSystemManagersUnitVouches) {
  const std::string binary = UserBinary();
  const std::map<int, std::string> trusted = {
      {500, "/system.slice/nginx.service"},
      {501, "/system.slice/foo.slice/nginx.service"},
      {502, "/system.slice/nginx.service/payload"},
      {503, "/nginx.service"},
  };
  const std::string user_manager =
      "/user.slice/user-1000.slice/user@1000.service";
  const std::map<int, std::string> refused = {
      {600, user_manager + "/app.slice/nginx.service"},
      {601, user_manager + "/app.slice/nginx.service/payload"},
      {602, "/system.slice/other.service/nginx.service"},
      {603, "/machine.slice/libpod-1.scope/system.slice/nginx.service"},
      {604, "/../../system.slice/nginx.service"},
      {605, "/system.slice/xnginx.service"},
      {606, "/system.slice/nginx.service.d/x.service"},
      {607, user_manager},
  };
  for (const auto& [pid, cgroup] : trusted) {
    AddProcess(pid, 1, binary, 65534, cgroup, "nginx: master process");
  }
  for (const auto& [pid, cgroup] : refused) {
    AddProcess(pid, 1, binary, 65534, cgroup, "nginx: master process");
  }
  options_.trust.systemd_unit = "nginx.service";
  auto why = Refused();
  for (const auto& [pid, cgroup] : trusted) {
    EXPECT_EQ(why.count(pid), 0u) << cgroup << ": " << why[pid];
  }
  for (const auto& [pid, cgroup] : refused) {
    EXPECT_THAT(why[pid], HasSubstr("not trusted as a target")) << cgroup;
  }
  EXPECT_THAT(pids_, ElementsAre(100, 101, 102, 104, 500, 501, 502, 503));
  const std::string lookalike =
      "; and it is not in the system's nginx.service: its cgroup of that "
      "name is ";
  EXPECT_THAT(why[600],
              HasSubstr(lookalike + "inside user@1000.service, a user's own "
                                    "service manager"));
  EXPECT_THAT(why[601], HasSubstr("inside user@1000.service"));
  EXPECT_THAT(why[602], HasSubstr(lookalike + "inside other.service"));
  EXPECT_THAT(why[603], HasSubstr(lookalike + "inside libpod-1.scope"));
  EXPECT_THAT(why[604],
              HasSubstr(lookalike + "in no unit of the system's service "
                                    "manager"));
  EXPECT_THAT(why[605], HasSubstr("; and it is not in nginx.service"));
  EXPECT_THAT(why[606], HasSubstr("; and it is not in nginx.service"));
  EXPECT_THAT(why[607], HasSubstr("; and it is not in nginx.service"));
}

// Named in the policy anyway (validation refuses it), a user's manager
// vouches for nothing in it either.
TEST_F(TargetTrustTest, AUsersManagerNeverVouches) {
  AddProcess(600, 1, UserBinary(), 1000,
             "/user.slice/user-1000.slice/user@1000.service/app.slice/"
             "x.service",
             "nginx: master process");
  options_.trust.systemd_unit = "user@1000.service";
  EXPECT_THAT(Refused()[600], HasSubstr("a user's own service manager"));
}

TEST(ProcParseUidTest, RealUid) {
  auto uid = ParseStatusRealUid("Name:\tx\nUid:\t1000\t0\t0\t0\nGid:\t5\n");
  ASSERT_TRUE(uid.ok());
  EXPECT_EQ(*uid, 1000u);
  EXPECT_FALSE(ParseStatusRealUid("Name:\tx\n").ok());
  EXPECT_FALSE(ParseStatusRealUid("Uid:\t\n").ok());
  EXPECT_FALSE(ParseStatusRealUid("Uid:\t-1\t0\t0\t0\n").ok());
}

TEST(ProcParseUidTest, RealAndEffective) {
  auto uids = ParseStatusUids("Name:\tx\nUid:\t1000\t0\t1000\t0\n");
  ASSERT_TRUE(uids.ok()) << uids.status();
  EXPECT_EQ(uids->real, 1000u);
  EXPECT_EQ(uids->effective, 0u);
  EXPECT_FALSE(ParseStatusUids("Uid:\t0\n").ok()) << "cut short";
  EXPECT_FALSE(ParseStatusUids("Uid:\t0\tx\t0\t0\n").ok());
}

// Who runs a neighbour daemon (issue #39): root, really and effectively.
TEST(NotRootProblemTest, BothUidsMustBeRoots) {
  EXPECT_EQ(NotRootProblem("Uid:\t0\t0\t0\t0\n"), "");
  EXPECT_THAT(NotRootProblem("Uid:\t65534\t65534\t65534\t65534\n"),
              HasSubstr("runs as uid 65534 (effective 65534), not root"));
  EXPECT_THAT(NotRootProblem("Uid:\t1000\t0\t1000\t0\n"),
              HasSubstr("uid 1000 (effective 0)"));
  EXPECT_THAT(NotRootProblem("Uid:\t0\t1000\t0\t1000\n"),
              HasSubstr("uid 0 (effective 1000)"));
  EXPECT_THAT(NotRootProblem("Name:\tirqbalance\n"), HasSubstr("no Uid line"));
}

}  // namespace
}  // namespace locus
