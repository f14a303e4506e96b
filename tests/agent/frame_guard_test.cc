#include "agent/api/frame_guard.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace locus {
namespace {

// A relay between a test's end of a client socket and the end gRPC would
// hold (plain blocking sockets, for the test to read and write).
class FrameGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto guard = FrameGuard::Start({});
    ASSERT_TRUE(guard.ok()) << guard.status();
    guard_ = *std::move(guard);
    int client[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, client), 0);
    client_.reset(client[0]);
    auto pair = guard_->NewPair();
    ASSERT_TRUE(pair.ok()) << pair.status();
    grpc_end_ = std::move(pair->grpc_end);
    // gRPC's end comes non-blocking; the test uses it as a plain socket.
    fcntl(grpc_end_.get(), F_SETFL, 0);
    guard_->Relay(UniqueFd(client[1]), std::move(pair->relay_end), "test");
  }

  std::unique_ptr<FrameGuard> guard_;
  UniqueFd client_;
  UniqueFd grpc_end_;
};

// A client that reads nothing: gRPC's writes fill the relay's buffer and the
// client's socket. When gRPC then closes its end, the relay must let go of
// the client too: the connection table counts only gRPC's descriptor.
TEST_F(FrameGuardTest,
       ClosesTheClientWhenGrpcClosesEvenIfTheClientReadsNothing) {
  // gRPC writes until nothing more fits anywhere.
  const std::string chunk(4096, 'x');
  size_t written = 0;
  for (int idle = 0; idle < 50;) {
    ssize_t n = send(grpc_end_.get(), chunk.data(), chunk.size(),
                     MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      written += static_cast<size_t>(n);
      idle = 0;
    } else {
      ++idle;
      poll(nullptr, 0, 10);
    }
  }
  EXPECT_GT(written, FrameGuardOptions{}.buffer_bytes);
  grpc_end_.reset();
  pollfd p = {client_.get(), 0, 0};
  ASSERT_EQ(poll(&p, 1, 5000), 1) << "the relay still holds the client";
  EXPECT_NE(p.revents & POLLHUP, 0);
}

// Bytes pass both ways unchanged.
TEST_F(FrameGuardTest, RelaysBothWays) {
  const std::string hello = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  ASSERT_EQ(send(client_.get(), hello.data(), hello.size(), 0),
            static_cast<ssize_t>(hello.size()));
  std::string got(hello.size(), '\0');
  ASSERT_EQ(recv(grpc_end_.get(), got.data(), got.size(), MSG_WAITALL),
            static_cast<ssize_t>(got.size()));
  EXPECT_EQ(got, hello);
  ASSERT_EQ(send(grpc_end_.get(), "ok", 2, 0), 2);
  char back[2];
  ASSERT_EQ(recv(client_.get(), back, 2, MSG_WAITALL), 2);
  EXPECT_EQ(std::string(back, 2), "ok");
}

}  // namespace
}  // namespace locus
