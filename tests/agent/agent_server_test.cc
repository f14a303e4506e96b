#include "agent/api/agent_server.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <future>

#include "agent/api/agent_service.h"
#include "agent/ctl/agent_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/agent_test_util.h"
#include "tests/common/sanitizers.h"

namespace locus {
namespace {

class AgentServerTest : public ::testing::Test {
 protected:
  AgentServerOptions Options() {
    AgentServerOptions o;
    o.socket_path = dir_.File("locusd.sock");
    o.socket_group = "root";
    return o;
  }
  void StartServer(AgentServerOptions options) {
    auto server = AgentServer::Start(std::move(options), &hub_, &controller_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }
  std::unique_ptr<v1::Agent::Stub> Stub() {
    return NewAgentStub(server_->socket_path());
  }
  static void Deadline(grpc::ClientContext* c, int seconds = 5) {
    c->set_deadline(std::chrono::system_clock::now() +
                    std::chrono::seconds(seconds));
  }
  grpc::Status GetStatus(v1::Agent::Stub* stub, v1::AgentStatus* out) {
    grpc::ClientContext c;
    Deadline(&c);
    return stub->GetStatus(&c, {}, out);
  }

  TempDir dir_;
  MetricsHub hub_;
  FakeController controller_;
  std::unique_ptr<AgentServer> server_;
};

TEST_F(AgentServerTest, ServesStatusFromTheController) {
  StartServer(Options());
  auto stub = Stub();
  v1::AgentStatus status;
  grpc::Status rpc = GetStatus(stub.get(), &status);
  ASSERT_TRUE(rpc.ok()) << rpc.error_message();
  EXPECT_EQ(status.version(), "0.1.0-test");
  EXPECT_EQ(status.mode(), v1::AGENT_MODE_DRY_RUN);
  EXPECT_EQ(status.subscribers(), 0u);  // filled in by the service
}

TEST_F(AgentServerTest, SocketHasModeAndGroup) {
  AgentServerOptions o = Options();
  o.socket_path = dir_.File("run/locus/locusd.sock");  // parent is created
  StartServer(o);
  struct stat st;
  ASSERT_EQ(stat(o.socket_path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  EXPECT_EQ(st.st_gid, 0u);
  EXPECT_EQ(server_->socket_group_name(), "root");
  ASSERT_EQ(stat(dir_.File("run/locus").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  server_->Shutdown();
  EXPECT_NE(access(o.socket_path.c_str(), F_OK), 0);  // removed on shutdown
}

// Without its group the socket is root's alone: no group bits on the socket
// or its new directory, so group root's members are not let in by default.
TEST_F(AgentServerTest, MissingGroupMakesTheSocketRootsAlone) {
  AgentServerOptions o = Options();
  o.socket_group = "no-such-group-locus-test";
  o.socket_path = dir_.File("run/locusd.sock");
  StartServer(o);
  EXPECT_EQ(server_->socket_gid(), 0u);
  EXPECT_EQ(server_->socket_group_name(), "");
  struct stat st;
  ASSERT_EQ(stat(o.socket_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_gid, 0u);
  ASSERT_EQ(stat(dir_.File("run").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

TEST_F(AgentServerTest, ReplacesAStaleSocketButNotALiveOne) {
  // A socket file nobody listens on, as a crashed daemon leaves behind.
  {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    std::string path = Options().socket_path;
    std::memcpy(addr.sun_path, path.data(), path.size());
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    close(fd);
  }
  StartServer(Options());
  auto second = AgentServer::Start(Options(), &hub_, &controller_);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kAlreadyExists);
  // The refused second server left the first one's socket alone.
  auto stub = Stub();
  v1::AgentStatus status;
  EXPECT_TRUE(GetStatus(stub.get(), &status).ok());
}

TEST_F(AgentServerTest, RefusesAPathThatIsNotASocket) {
  std::ofstream(Options().socket_path) << "not a socket";
  auto server = AgentServer::Start(Options(), &hub_, &controller_);
  EXPECT_EQ(server.status().code(), absl::StatusCode::kFailedPrecondition);
  AgentServerOptions o = Options();
  o.socket_path = "/tmp/" + std::string(200, 'x');
  EXPECT_EQ(AgentServer::Start(o, &hub_, &controller_).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(AgentServerTest, RootMayMutate) {
  if (geteuid() != 0) GTEST_SKIP() << "the test process is not root";
  StartServer(Options());
  auto stub = Stub();
  grpc::ClientContext c;
  Deadline(&c);
  v1::SetModeRequest request;
  request.set_mode(v1::AGENT_MODE_ENFORCE);
  v1::SetModeResponse response;
  grpc::Status rpc = stub->SetMode(&c, request, &response);
  ASSERT_TRUE(rpc.ok()) << rpc.error_message();
  EXPECT_EQ(response.previous(), v1::AGENT_MODE_DRY_RUN);
  EXPECT_EQ(controller_.mode(), v1::AGENT_MODE_ENFORCE);

  grpc::ClientContext c2;
  Deadline(&c2);
  request.set_mode(v1::AGENT_MODE_UNSPECIFIED);
  EXPECT_EQ(stub->SetMode(&c2, request, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(AgentServerTest, ExplainValidatesAndForwards) {
  StartServer(Options());
  auto stub = Stub();
  {
    grpc::ClientContext c;
    Deadline(&c);
    v1::ExplainResponse r;
    EXPECT_EQ(stub->Explain(&c, {}, &r).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
  }
  {
    grpc::ClientContext c;
    Deadline(&c);
    v1::ExplainRequest q;
    q.set_tid(1234);
    v1::ExplainResponse r;
    ASSERT_TRUE(stub->Explain(&c, q, &r).ok());
    EXPECT_EQ(r.subject(), "thread 1234 (nginx worker)");
  }
  {
    grpc::ClientContext c;
    Deadline(&c);
    v1::ExplainRequest q;
    q.set_tid(99);
    v1::ExplainResponse r;
    EXPECT_EQ(stub->Explain(&c, q, &r).error_code(),
              grpc::StatusCode::NOT_FOUND);
  }
}

TEST_F(AgentServerTest,
       OversizedAndMalformedRequestsAreRefusedAndServingGoesOn) {
  AgentServerOptions o = Options();
  o.max_request_bytes = 4096;
  StartServer(o);
  auto stub = Stub();
  {
    grpc::ClientContext c;
    Deadline(&c);
    v1::SubscribeRequest big;
    big.set_client_name(std::string(64 * 1024, 'x'));
    auto reader = stub->Subscribe(&c, big);
    v1::Metrics m;
    EXPECT_FALSE(reader->Read(&m));
    EXPECT_EQ(reader->Finish().error_code(),
              grpc::StatusCode::RESOURCE_EXHAUSTED);
  }
  {
    // Bytes that are not a GetStatusRequest: a field 1 of wire type 7.
    grpc::GenericStub generic(grpc::CreateChannel(
        "unix:" + o.socket_path, grpc::InsecureChannelCredentials()));
    grpc::ClientContext c;
    Deadline(&c);
    grpc::Slice slice(std::string("\x0f\xff\xff\xff", 4));
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    std::promise<grpc::Status> done;
    generic.UnaryCall(&c, "/locus.v1.Agent/GetStatus", grpc::StubOptions(),
                      &request, &response,
                      [&done](grpc::Status s) { done.set_value(s); });
    grpc::Status s = done.get_future().get();
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  }
  // The same channel and a new one both still work.
  v1::AgentStatus status;
  EXPECT_TRUE(GetStatus(stub.get(), &status).ok());
  auto fresh = Stub();
  EXPECT_TRUE(GetStatus(fresh.get(), &status).ok());
}

// Bytes that are not HTTP/2 at all, a valid preface followed by a frame
// header announcing 16 MiB, and a client that connects and says nothing: each
// connection is dropped or ignored by the server, which answers the others.
TEST_F(AgentServerTest, RawGarbageOnTheSocketIsDroppedAndServingGoesOn) {
  StartServer(Options());
  auto raw = [&](const std::string& bytes) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, server_->socket_path().data(),
                server_->socket_path().size());
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    if (!bytes.empty()) {
      EXPECT_EQ(write(fd, bytes.data(), bytes.size()),
                static_cast<ssize_t>(bytes.size()));
    }
    return fd;
  };
  // The server closes a connection it cannot parse: read() sees EOF (after
  // whatever it sent first, e.g. its SETTINGS and a GOAWAY).
  auto closed_by_server = [](int fd) {
    timeval timeout{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) {
    }
    return n == 0 || (n < 0 && errno == ECONNRESET);
  };
  std::string garbage(8192, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = char(i * 131 + 7);
  int g = raw(garbage);
  EXPECT_TRUE(closed_by_server(g)) << "garbage left the connection open";
  close(g);

  std::string huge_frame = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  // A DATA frame header: length 0xffffff, type 0, flags 0, stream 1.
  huge_frame += std::string("\xff\xff\xff\x00\x00\x00\x00\x00\x01", 9);
  huge_frame += std::string(4096, 'x');
  int h = raw(huge_frame);
  EXPECT_TRUE(closed_by_server(h)) << "oversized frame left it open";
  close(h);

  int silent = raw("");  // held open across the calls below
  v1::AgentStatus status;
  auto stub = Stub();
  EXPECT_TRUE(GetStatus(stub.get(), &status).ok());
  auto fresh = Stub();
  EXPECT_TRUE(GetStatus(fresh.get(), &status).ok());
  close(silent);
}

TEST_F(AgentServerTest, SubscribeStreamsTicksAndHonoursMaxMessages) {
  StartServer(Options());
  FakePublisher publisher(&hub_, absl::Milliseconds(20), 8);
  auto stub = Stub();
  grpc::ClientContext c;
  Deadline(&c, 20);
  v1::SubscribeRequest request;
  request.set_max_messages(3);
  auto reader = stub->Subscribe(&c, request);
  std::vector<uint64_t> ticks;
  v1::Metrics m;
  while (reader->Read(&m)) {
    ticks.push_back(m.tick());
    EXPECT_EQ(m.tasks_size(), 8);
  }
  EXPECT_TRUE(reader->Finish().ok());
  ASSERT_EQ(ticks.size(), 3u);
  EXPECT_LT(ticks[0], ticks[1]);
  EXPECT_LT(ticks[1], ticks[2]);
}

// A client reading far slower than the tick loses messages, learns exactly
// how many from the stream itself, and does not slow the publisher.
TEST_F(AgentServerTest, SlowSubscriberLosesMessagesInBandAndPublishingGoesOn) {
  StartServer(Options());
  constexpr absl::Duration kPeriod = absl::Milliseconds(10);
  // ~80 KB per message, so transport buffers fill within a few ticks.
  FakePublisher publisher(&hub_, kPeriod, 2000);
  auto stub = Stub();
  grpc::ClientContext c;
  Deadline(&c, 60);
  auto reader = stub->Subscribe(&c, {});
  std::vector<v1::Metrics> got;
  v1::Metrics m;
  while (got.size() < 20 && reader->Read(&m)) {
    got.push_back(m);
    absl::SleepFor(absl::Milliseconds(100));
  }
  c.TryCancel();
  reader->Finish();
  uint64_t published = publisher.ticks();
  publisher.Stop();
  ASSERT_EQ(got.size(), 20u);

  uint64_t dropped = 0;
  for (size_t i = 1; i < got.size(); ++i) {
    // Every tick missing between two messages is reported in the second.
    EXPECT_EQ(got[i].tick() - got[i - 1].tick() - 1,
              got[i].drops().subscriber_dropped())
        << "between ticks " << got[i - 1].tick() << " and " << got[i].tick();
    EXPECT_EQ(got[i].drops().subscriber_dropped_total(),
              got[i - 1].drops().subscriber_dropped_total() +
                  got[i].drops().subscriber_dropped());
    dropped += got[i].drops().subscriber_dropped();
  }
  // ~2 s at 100 ticks/s with 20 read; what the transport buffers is not lost.
  EXPECT_GT(dropped, 50u) << "published " << published << ", received ticks "
                          << got.front().tick() << ".." << got.back().tick();
  // The publisher went on while the client lagged: it published past the
  // last tick the client read. How long Publish() took and the longest gap
  // between ticks are recorded as figures, not asserted: wall-clock limits
  // fail on a loaded machine whatever the code does.
  EXPECT_GT(published, got.back().tick() - 1);
  RecordProperty("published", static_cast<int>(published));
  RecordProperty("dropped", static_cast<int>(dropped));
  RecordProperty("max_publish_us", static_cast<int>(absl::ToInt64Microseconds(
                                       publisher.max_publish_time())));
  RecordProperty(
      "max_interval_us",
      static_cast<int>(absl::ToInt64Microseconds(publisher.max_interval())));
  RecordProperty("message_bytes", static_cast<int>(got.back().ByteSizeLong()));
}

TEST_F(AgentServerTest, ShutdownEndsOpenStreams) {
  StartServer(Options());
  FakePublisher publisher(&hub_, absl::Milliseconds(20), 1);
  auto stub = Stub();
  grpc::ClientContext c;
  Deadline(&c, 30);
  auto reader = stub->Subscribe(&c, {});
  v1::Metrics m;
  ASSERT_TRUE(reader->Read(&m));
  EXPECT_EQ(hub_.subscriber_count(), 1u);
  absl::Time start = absl::Now();
  server_->Shutdown();
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  while (reader->Read(&m)) {
  }
  reader->Finish();
  EXPECT_EQ(hub_.subscriber_count(), 0u);
}

TEST_F(AgentServerTest, TcpListenerIsLoopbackAndReadOnly) {
  AgentServerOptions o = Options();
  o.tcp_address = "0";
  StartServer(o);
  ASSERT_GT(server_->tcp_port(), 0);
  auto stub = v1::Agent::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->tcp_port()),
                          grpc::InsecureChannelCredentials()));
  v1::AgentStatus status;
  ASSERT_TRUE(GetStatus(stub.get(), &status).ok());
  grpc::ClientContext c;
  Deadline(&c);
  v1::SetModeRequest request;
  request.set_mode(v1::AGENT_MODE_ENFORCE);
  v1::SetModeResponse response;
  // Even a root client: TCP carries no credentials.
  EXPECT_EQ(stub->SetMode(&c, request, &response).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(controller_.set_mode_calls(), 0);
  grpc::ClientContext c2;
  Deadline(&c2);
  v1::ExperimentReport report;
  grpc::Status start = stub->StartExperiment(&c2, {}, &report);
  EXPECT_EQ(start.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(start.error_message(),
              ::testing::HasSubstr("StartExperiment changes the agent: it is "
                                   "refused over TCP"));
  grpc::ClientContext c3;
  Deadline(&c3);
  EXPECT_EQ(stub->StopExperiment(&c3, {}, &report).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(controller_.start_requests().empty());
  EXPECT_TRUE(controller_.stop_requests().empty());
}

// The experiment's calls reach the controller and its answers come back,
// status codes included; starting and stopping need the same rights as
// SetMode.
TEST_F(AgentServerTest, ExperimentCallsRoundTripAndPassErrorsThrough) {
  if (geteuid() != 0) GTEST_SKIP() << "the test process is not root";
  StartServer(Options());
  auto stub = Stub();
  {
    grpc::ClientContext c;
    Deadline(&c);
    v1::StartExperimentRequest q;
    q.mutable_duration()->set_seconds(600);
    q.mutable_interval()->set_seconds(5);
    q.set_aa(true);
    q.set_seed(11);
    q.set_reason("canary");
    v1::ExperimentReport r;
    grpc::Status rpc = stub->StartExperiment(&c, q, &r);
    ASSERT_TRUE(rpc.ok()) << rpc.error_message();
    EXPECT_EQ(r.state(), v1::EXPERIMENT_STATE_RUNNING);
    EXPECT_TRUE(r.aa());
    EXPECT_EQ(r.seed(), 11u);
    ASSERT_EQ(controller_.start_requests().size(), 1u);
    EXPECT_EQ(controller_.start_requests()[0].duration().seconds(), 600);
    EXPECT_EQ(controller_.start_requests()[0].interval().seconds(), 5);
    EXPECT_EQ(controller_.start_requests()[0].reason(), "canary");
  }
  {
    grpc::ClientContext c;
    Deadline(&c);
    v1::ExperimentReport r;
    grpc::Status rpc = stub->GetExperiment(&c, {}, &r);
    EXPECT_EQ(rpc.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(rpc.error_message(),
              "no experiment has run since the agent started");
    controller_.set_get_reply(SampleExperimentReport());
    grpc::ClientContext c2;
    Deadline(&c2);
    ASSERT_TRUE(stub->GetExperiment(&c2, {}, &r).ok());
    EXPECT_EQ(r.id(), "exp-20261202-173012");
    EXPECT_EQ(r.units(1).comm(), kHostileComm);
    EXPECT_EQ(controller_.get_experiment_calls(), 2);
  }
  {
    grpc::ClientContext c;
    Deadline(&c);
    v1::StopExperimentRequest q;
    q.set_reason("p99 alarm");
    v1::ExperimentReport r;
    grpc::Status rpc = stub->StopExperiment(&c, q, &r);
    EXPECT_EQ(rpc.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(rpc.error_message(), "no experiment is running");
    v1::ExperimentReport stopped = SampleExperimentReport();
    stopped.set_state(v1::EXPERIMENT_STATE_STOPPED);
    controller_.set_stop_reply(stopped);
    grpc::ClientContext c2;
    Deadline(&c2);
    ASSERT_TRUE(stub->StopExperiment(&c2, q, &r).ok());
    EXPECT_EQ(r.state(), v1::EXPERIMENT_STATE_STOPPED);
    ASSERT_EQ(controller_.stop_requests().size(), 2u);
    EXPECT_EQ(controller_.stop_requests()[1].reason(), "p99 alarm");
  }
  {
    controller_.set_start_reply(absl::FailedPreconditionError(
        "the agent is in dry run: an experiment needs enforce"));
    grpc::ClientContext c;
    Deadline(&c);
    v1::ExperimentReport r;
    grpc::Status rpc = stub->StartExperiment(&c, {}, &r);
    EXPECT_EQ(rpc.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(rpc.error_message(),
              "the agent is in dry run: an experiment needs enforce");
  }
}

// The service alone, as the server builds it for a peer that is neither
// root nor in the socket's group: start and stop are refused before the
// controller hears of them, the report is still readable.
TEST(AgentServiceTest, UnprivilegedPeerIsRefusedStartAndStop) {
  MetricsHub hub;
  FakeController controller;
  controller.set_get_reply(SampleExperimentReport());
  AgentServiceOptions options;
  options.allow_mutations = false;
  options.socket_group_name = "locus";
  AgentService service(&hub, &controller, options);
  grpc::ServerContext context;
  v1::ExperimentReport r;
  v1::StartExperimentRequest start;
  grpc::Status s = service.StartExperiment(&context, &start, &r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(s.error_message(),
            "StartExperiment changes the agent: it needs root or membership "
            "in group 'locus' (the socket's group)");
  v1::StopExperimentRequest stop;
  s = service.StopExperiment(&context, &stop, &r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(),
              ::testing::StartsWith("StopExperiment changes the agent"));
  EXPECT_TRUE(controller.start_requests().empty());
  EXPECT_TRUE(controller.stop_requests().empty());
  v1::GetExperimentRequest get;
  ASSERT_TRUE(service.GetExperiment(&context, &get, &r).ok());
  EXPECT_EQ(r.id(), "exp-20261202-173012");

  AgentServiceOptions privileged;
  privileged.allow_mutations = true;
  AgentService allowed(&hub, &controller, privileged);
  EXPECT_TRUE(allowed.StartExperiment(&context, &start, &r).ok());
  EXPECT_EQ(controller.start_requests().size(), 1u);
}

TEST(NormalizeTcpAddress, PortAloneMeansLoopback) {
  EXPECT_EQ(*NormalizeTcpAddress("7070"), "127.0.0.1:7070");
  EXPECT_EQ(*NormalizeTcpAddress("[::1]:7070"), "[::1]:7070");
  EXPECT_EQ(*NormalizeTcpAddress("0.0.0.0:1"), "0.0.0.0:1");
  EXPECT_FALSE(NormalizeTcpAddress("70000").ok());
  EXPECT_FALSE(NormalizeTcpAddress("localhost").ok());
  EXPECT_FALSE(NormalizeTcpAddress(":").ok());
}

}  // namespace
}  // namespace locus
