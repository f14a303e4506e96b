// Mutating calls from peers that are neither root nor in the socket's group
// are refused; the client runs as another user with setpriv(1).
#include <sys/stat.h>
#include <unistd.h>

#include "agent/api/agent_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/agent_test_util.h"
#include "tests/common/test_paths.h"

namespace locus {
namespace {

using ::testing::HasSubstr;

class PeerCredentialsEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to switch users";
    // Reachable by everyone, so that only the credentials check decides.
    ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
  }
  void Start(mode_t mode) {
    AgentServerOptions o;
    o.socket_path = dir_.File("locusd.sock");
    o.socket_group = "root";
    o.socket_mode = mode;
    auto server = AgentServer::Start(o, &hub_, &controller_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }
  ProcessResult Ctl(const std::vector<std::string>& setpriv,
                    const std::vector<std::string>& args) {
    std::vector<std::string> argv = {LOCUSCTL_PATH,
                                     "--socket=" + server_->socket_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcessAs(setpriv, argv);
  }

  const std::vector<std::string> kNobody = {"--reuid=nobody", "--regid=nogroup",
                                            "--clear-groups"};
  TempDir dir_;
  MetricsHub hub_;
  FakeController controller_;
  std::unique_ptr<AgentServer> server_;
};

TEST_F(PeerCredentialsEndToEnd, NonRootPeerIsRefusedSetModeAndRestore) {
  Start(0666);
  ProcessResult r = Ctl(kNobody, {"mode", "enforce"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.err, HasSubstr("mode: permission denied: SetMode changes the "
                               "agent: it needs root or membership in group "
                               "'root'"));
  r = Ctl(kNobody, {"restore"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.err, HasSubstr("restore: permission denied"));
  EXPECT_EQ(controller_.set_mode_calls(), 0);
  EXPECT_EQ(controller_.restore_calls(), 0);
  EXPECT_EQ(controller_.mode(), v1::AGENT_MODE_DRY_RUN);
  // Reading stays open to whoever can reach the socket.
  r = Ctl(kNobody, {"status"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(PeerCredentialsEndToEnd, NonRootPeerIsRefusedStartingAndStopping) {
  Start(0666);
  controller_.set_get_reply(SampleExperimentReport());
  ProcessResult r = Ctl(kNobody, {"experiment", "start"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.err, HasSubstr("experiment start: permission denied: "
                               "StartExperiment changes the agent: it needs "
                               "root or membership in group 'root'"));
  r = Ctl(kNobody, {"experiment", "stop"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.err, HasSubstr("experiment stop: permission denied"));
  EXPECT_TRUE(controller_.start_requests().empty());
  EXPECT_TRUE(controller_.stop_requests().empty());
  r = Ctl(kNobody, {"experiment", "status"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("VERDICT: "));
  // Root may.
  r = Ctl({}, {"experiment", "start", "--duration=10m"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(controller_.start_requests().size(), 1u);
}

TEST_F(PeerCredentialsEndToEnd, RootIsAllowed) {
  Start(0666);
  ProcessResult r = Ctl({}, {"mode", "enforce"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "mode enforce (was dry_run)\n");
  r = Ctl({}, {"restore"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "restored 2 change(s), 0 failed\n");
  EXPECT_EQ(controller_.set_mode_calls(), 1);
  EXPECT_EQ(controller_.restore_calls(), 1);
}

TEST_F(PeerCredentialsEndToEnd, MemberOfTheSocketsGroupIsAllowed) {
  Start(0666);
  // nobody with root's group (the socket's, on a host without 'locus') as a
  // supplementary group: seen through SO_PEERGROUPS.
  ProcessResult r = Ctl({"--reuid=nobody", "--regid=nogroup", "--groups=0"},
                        {"mode", "dry_run"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(controller_.set_mode_calls(), 1);
}

TEST_F(PeerCredentialsEndToEnd, DefaultSocketModeKeepsOthersOut) {
  Start(0660);
  ProcessResult r = Ctl(kNobody, {"status"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("locusd.sock: Permission denied"));
}

}  // namespace
}  // namespace locus
