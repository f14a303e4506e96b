// What no client of the agent's socket may take from others or from the
// agent: metrics slots (root's watch always gets in), a slot held by a client
// that reads nothing, and file descriptors (many idle connections).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "agent/api/agent_server.h"
#include "agent/ctl/agent_client.h"
#include "common/unique_fd.h"
#include "gtest/gtest.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/http2_frames.h"

namespace locus {
namespace {

class AgentServerLimitsTest : public ::testing::Test {
 protected:
  AgentServerOptions Options() {
    AgentServerOptions o;
    o.socket_path = dir_.File("locusd.sock");
    o.socket_group = "root";
    o.tcp_address = "0";
    return o;
  }
  void StartServer(AgentServerOptions options) {
    auto server =
        AgentServer::Start(std::move(options), hub_.get(), &controller_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }
  std::unique_ptr<v1::Agent::Stub> TcpStub() {
    return v1::Agent::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->tcp_port()),
                            grpc::InsecureChannelCredentials()));
  }
  static void Deadline(grpc::ClientContext* c, int seconds = 10) {
    c->set_deadline(std::chrono::system_clock::now() +
                    std::chrono::seconds(seconds));
  }
  // Opens a stream and waits for its first message: it holds a slot.
  struct Stream {
    std::unique_ptr<grpc::ClientContext> context;
    std::unique_ptr<grpc::ClientReader<v1::Metrics>> reader;
    grpc::Status Open(v1::Agent::Stub* stub) {
      context = std::make_unique<grpc::ClientContext>();
      Deadline(context.get(), 30);
      reader = stub->Subscribe(context.get(), {});
      v1::Metrics m;
      if (reader->Read(&m)) return grpc::Status::OK;
      finished = true;
      return reader->Finish();
    }
    ~Stream() {
      if (context) context->TryCancel();
      if (reader && !finished) reader->Finish();
    }
    bool finished = false;
  };
  UniqueFd ConnectTcp() {
    UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(server_->tcp_port());
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) !=
        0) {
      ADD_FAILURE() << "connect: " << strerror(errno);
      return UniqueFd();
    }
    // A read that waits longer has its answer: the server is not coming.
    timeval timeout = {.tv_sec = 10, .tv_usec = 0};
    setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    return fd;
  }
  // Writes `bytes` to `fd` from a thread, so that what the server sends
  // back is read while the burst goes out; stops when the server closes.
  static std::thread WriteInBackground(int fd, const std::string& bytes) {
    return std::thread([fd, &bytes] {
      for (size_t off = 0; off < bytes.size();) {
        ssize_t n =
            send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
        if (n <= 0) return;
        off += static_cast<size_t>(n);
      }
    });
  }
  // Another client over TCP is still served.
  void ExpectTcpStatusServed() {
    auto stub = TcpStub();
    grpc::ClientContext c;
    Deadline(&c);
    v1::AgentStatus status;
    grpc::Status rpc = stub->GetStatus(&c, {}, &status);
    EXPECT_TRUE(rpc.ok()) << rpc.error_message();
  }
  bool WaitFor(const std::function<bool()>& done) {
    for (int i = 0; i < 200 && !done(); ++i) {
      absl::SleepFor(absl::Milliseconds(50));
    }
    return done();
  }

  TempDir dir_;
  std::unique_ptr<MetricsHub> hub_;
  FakeController controller_;
  std::unique_ptr<AgentServer> server_;
};

TEST_F(AgentServerLimitsTest, TcpReadersCannotLockRootOutOfTheStream) {
  if (geteuid() != 0) GTEST_SKIP() << "the test process is not root";
  hub_ = std::make_unique<MetricsHub>(MetricsHubOptions{
      .max_subscribers = 4, .privileged_reserve = 1, .max_per_peer = 2});
  StartServer(Options());
  FakePublisher publisher(hub_.get(), absl::Milliseconds(20), 1);
  auto tcp = TcpStub();
  std::vector<std::unique_ptr<Stream>> held;
  for (int i = 0; i < 2; ++i) {
    held.push_back(std::make_unique<Stream>());
    ASSERT_TRUE(held.back()->Open(tcp.get()).ok()) << i;
  }
  // All of TCP is one peer, 127.0.0.1: its third stream is refused.
  Stream third;
  grpc::Status refused = third.Open(tcp.get());
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(refused.error_message().find("tcp 127.0.0.1 already holds 2"),
            std::string::npos)
      << refused.error_message();
  // Root over the Unix socket takes the last slots, the reserved one
  // included, and then makes a reader give way.
  auto unix_stub = NewAgentStub(server_->socket_path());
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<Stream>());
    grpc::Status s = held.back()->Open(unix_stub.get());
    ASSERT_TRUE(s.ok()) << i << ": " << s.error_message();
  }
  EXPECT_EQ(hub_->subscriber_count(), 4u);
  EXPECT_EQ(hub_->dropped_subscribers(), 1u);
}

// A client that never reads (its library answers pings, its window stays
// shut) holds a stream until the hub drops it; its slot is then free.
TEST_F(AgentServerLimitsTest, AClientThatReadsNothingLosesItsSlot) {
  hub_ = std::make_unique<MetricsHub>(
      MetricsHubOptions{.max_subscribers = 4, .stall_ticks = 30});
  StartServer(Options());
  // ~80 KB per message: the 64 KiB window and socket buffer fill at once.
  FakePublisher publisher(hub_.get(), absl::Milliseconds(10), 2000);
  auto stub = NewAgentStub(server_->socket_path());
  grpc::ClientContext c;
  Deadline(&c, 60);
  auto reader = stub->Subscribe(&c, {});  // and never Read()
  ASSERT_TRUE(WaitFor([&] { return hub_->subscriber_count() == 1; }));
  EXPECT_TRUE(WaitFor([&] { return hub_->dropped_subscribers() == 1; }));
  EXPECT_TRUE(WaitFor([&] { return hub_->subscriber_count() == 0; }));
  v1::Metrics m;
  while (reader->Read(&m)) {
  }
  EXPECT_FALSE(reader->Finish().ok());
}

// A reader that paused for 100 ticks, then reads, gets within a message or
// two (what sat in the socket) the current tick with the gap counted, not
// 100 old ticks with drops 0.
TEST_F(AgentServerLimitsTest, AReaderBackFromAPauseGetsFreshTicks) {
  hub_ = std::make_unique<MetricsHub>();
  StartServer(Options());
  FakePublisher publisher(hub_.get(), absl::Milliseconds(10), 2000);
  auto stub = NewAgentStub(server_->socket_path());
  grpc::ClientContext c;
  Deadline(&c, 60);
  auto reader = stub->Subscribe(&c, {});
  v1::Metrics m;
  ASSERT_TRUE(reader->Read(&m));
  absl::SleepFor(absl::Seconds(1));
  const uint64_t now = publisher.ticks();
  uint64_t previous = m.tick();
  bool fresh = false;
  for (int i = 0; i < 4 && !fresh && reader->Read(&m); ++i) {
    EXPECT_EQ(m.tick() - previous - 1, m.drops().subscriber_dropped());
    fresh = m.tick() >= now && m.drops().subscriber_dropped() > 50;
    previous = m.tick();
  }
  EXPECT_TRUE(fresh) << "tick " << m.tick() << " when " << now
                     << " was published";
  c.TryCancel();
  reader->Finish();
}

// A child process holding 300 idle TCP connections: the server keeps at
// most a quarter of RLIMIT_NOFILE, closes the rest, and this process (the
// agent) can still open files and serve root.
TEST_F(AgentServerLimitsTest, IdleConnectionsCannotExhaustDescriptors) {
  rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = 256;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  hub_ = std::make_unique<MetricsHub>();
  StartServer(Options());
  // Three descriptors a connection (the client's and the relay's pair).
  EXPECT_EQ(server_->connection_limits().max_connections, 21u);
  const int port = server_->tcp_port();
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    setrlimit(RLIMIT_NOFILE, &saved);
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < 300; ++i) {
      int fd = socket(AF_INET, SOCK_STREAM, 0);
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    }
    (void)!write(ready[1], "r", 1);
    pause();
    _exit(0);
  }
  char byte;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  // Half of the 21 (10) is kept for root and the socket's group.
  EXPECT_TRUE(WaitFor([&] { return server_->open_connections() == 11; }));
  absl::SleepFor(absl::Milliseconds(500));  // let the acceptor drain the rest
  EXPECT_EQ(server_->open_connections(), 11u);
  std::vector<int> files;
  for (int i = 0; i < 100; ++i) {
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0) << "open #" << i << ": " << strerror(errno);
    if (fd >= 0) files.push_back(fd);
  }
  for (int fd : files) close(fd);
  auto stub = NewAgentStub(server_->socket_path());
  grpc::ClientContext c;
  Deadline(&c);
  v1::AgentStatus status;
  grpc::Status rpc = stub->GetStatus(&c, {}, &status);
  EXPECT_TRUE(rpc.ok()) << rpc.error_message();
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(ready[0]);
  close(ready[1]);
  server_.reset();
  setrlimit(RLIMIT_NOFILE, &saved);
}

TEST_F(AgentServerLimitsTest, OverTcpTheRefusalSaysWhatTcpLacks) {
  hub_ = std::make_unique<MetricsHub>();
  StartServer(Options());
  auto stub = TcpStub();
  grpc::ClientContext c;
  Deadline(&c);
  v1::SetModeRequest request;
  request.set_mode(v1::AGENT_MODE_ENFORCE);
  v1::SetModeResponse response;
  grpc::Status s = stub->SetMode(&c, request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(s.error_message().find("refused over TCP"), std::string::npos)
      << s.error_message();
  EXPECT_NE(s.error_message().find(server_->socket_path()), std::string::npos);
  EXPECT_EQ(s.error_message().find("it needs root"), std::string::npos);
}

// A burst of 20,000 PINGs in one write. gRPC 1.51 answered the third with
// GOAWAY and then kept one error per further ping until the burst was read
// (40 MB a burst); each is now acked, the burst costs nothing lasting, and
// the connection still serves.
TEST_F(AgentServerLimitsTest, APingBurstIsAckedWithoutClosingTheConnection) {
  constexpr int kPings = 20000;
  hub_ = std::make_unique<MetricsHub>();
  StartServer(Options());
  UniqueFd fd = ConnectTcp();
  ASSERT_TRUE(fd.valid());
  std::string burst = std::string(kHttp2Preface) + Frame(kSettings);
  for (int i = 0; i < kPings; ++i)
    burst += Frame(kPing, 0, 0, std::string(8, 'p'));
  std::thread writer = WriteInBackground(fd.get(), burst);
  std::string in;
  int acks = 0, goaways = 0;
  while (acks < kPings && goaways == 0) {
    char buf[65536];
    ssize_t n = read(fd.get(), buf, sizeof(buf));
    if (n <= 0) break;
    in.append(buf, static_cast<size_t>(n));
    size_t at = 0;
    while (in.size() - at >= 9) {
      const auto* h = reinterpret_cast<const uint8_t*>(in.data() + at);
      const size_t length = (h[0] << 16) | (h[1] << 8) | h[2];
      if (in.size() - at < 9 + length) break;
      if (h[3] == kPing && (h[4] & kAck) != 0) ++acks;
      if (h[3] == kGoaway) ++goaways;
      at += 9 + length;
    }
    in.erase(0, at);
  }
  shutdown(fd.get(), SHUT_RDWR);
  writer.join();
  EXPECT_EQ(goaways, 0);
  EXPECT_EQ(acks, kPings);
  ExpectTcpStatusServed();
}

// HTTP/2 rapid reset: 5,000 streams, each opened and reset at once. gRPC
// 1.51 queued a call of about 10 kB for each (60-70 MB of RSS a burst); the
// relay in front of it closes the connection once its resets go over the
// budget, the rest never reach gRPC, and other clients are served.
TEST_F(AgentServerLimitsTest, ARapidResetBurstClosesTheConnection) {
  constexpr uint32_t kStreams = 5000;
  hub_ = std::make_unique<MetricsHub>();
  StartServer(Options());
  UniqueFd fd = ConnectTcp();
  ASSERT_TRUE(fd.valid());
  std::string burst = std::string(kHttp2Preface) + Frame(kSettings);
  for (uint32_t i = 0; i < kStreams; ++i) {
    burst += Headers(2 * i + 1) + RstStream(2 * i + 1);
  }
  std::thread writer = WriteInBackground(fd.get(), burst);
  bool closed = false;
  for (;;) {
    char buf[65536];
    ssize_t n = read(fd.get(), buf, sizeof(buf));
    if (n > 0) continue;
    closed = n == 0 || errno == ECONNRESET;
    break;
  }
  shutdown(fd.get(), SHUT_RDWR);
  writer.join();
  EXPECT_TRUE(closed) << "still open after 10 s: " << strerror(errno);
  EXPECT_EQ(server_->cut_off_connections(), 1u);
  ExpectTcpStatusServed();
}

// What a real client resets (a watch given up, a deadline) stays far below
// the budget: twenty streams opened and cancelled on one connection, and it
// still serves.
TEST_F(AgentServerLimitsTest, CancelledStreamsOfARealClientAreNotCutOff) {
  hub_ = std::make_unique<MetricsHub>();
  StartServer(Options());
  FakePublisher publisher(hub_.get(), absl::Milliseconds(20), 1);
  auto stub = NewAgentStub(server_->socket_path());
  for (int i = 0; i < 20; ++i) {
    Stream stream;
    ASSERT_TRUE(stream.Open(stub.get()).ok()) << "stream " << i;
  }
  grpc::ClientContext c;
  Deadline(&c);
  v1::AgentStatus status;
  grpc::Status rpc = stub->GetStatus(&c, {}, &status);
  EXPECT_TRUE(rpc.ok()) << rpc.error_message();
  EXPECT_EQ(server_->cut_off_connections(), 0u);
}

TEST(LimitsForNofile, KeepsThreeQuartersOfTheDescriptorsForTheAgent) {
  ConnectionLimits wanted;
  EXPECT_EQ(LimitsForNofile(wanted, 65536).max_connections, 256u);
  // 1024 / 4 / 3 descriptors a connection.
  ConnectionLimits low = LimitsForNofile(wanted, 1024);
  EXPECT_EQ(low.max_connections, 85u);
  EXPECT_EQ(low.privileged_reserve, 32u);
  low = LimitsForNofile(wanted, 200);
  EXPECT_EQ(low.max_connections, 16u);
  EXPECT_EQ(low.privileged_reserve, 8u);
  EXPECT_EQ(low.max_per_peer, 16u);
}

}  // namespace
}  // namespace locus
