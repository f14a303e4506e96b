// The /metrics endpoint against clients that are not Prometheus: silent
// or dripping connections must not starve a scrape, only /metrics itself
// is served, pipelined requests are all answered, and the address is read
// strictly (IPv6 only where the HTTP library has it).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/api/metrics_export.h"
#include "common/unique_fd.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

std::unique_ptr<MetricsExport> Serve(const std::string& address) {
  MetricsExportOptions options;
  options.listen = address;
  auto started = MetricsExport::Start(options, {"1", "k"});
  EXPECT_TRUE(started.ok()) << started.status();
  return started.ok() ? std::move(*started) : nullptr;
}

// A loopback connection whose reads give up after `timeout`.
UniqueFd Connect(int port, absl::Duration timeout, int family = AF_INET) {
  UniqueFd fd(socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  timeval tv = absl::ToTimeval(timeout);
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_storage storage{};
  socklen_t len = 0;
  if (family == AF_INET6) {
    auto* addr = reinterpret_cast<sockaddr_in6*>(&storage);
    addr->sin6_family = AF_INET6;
    addr->sin6_port = htons(static_cast<uint16_t>(port));
    addr->sin6_addr = in6addr_loopback;
    len = sizeof(*addr);
  } else {
    auto* addr = reinterpret_cast<sockaddr_in*>(&storage);
    addr->sin_family = AF_INET;
    addr->sin_port = htons(static_cast<uint16_t>(port));
    addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof(*addr);
  }
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&storage), len) != 0) {
    ADD_FAILURE() << "connect: " << strerror(errno);
    return UniqueFd();
  }
  return fd;
}

bool SendAll(int fd, const std::string& data) {
  for (size_t done = 0; done < data.size();) {
    ssize_t n = send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Everything until the server closes; `closed` says whether it did (and
// not the read timeout).
std::string ReadToEnd(int fd, bool* closed = nullptr) {
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (closed != nullptr) *closed = n == 0 || errno == ECONNRESET;
    return out;
  }
}

std::string Request(int port, const std::string& request,
                    absl::Duration timeout = absl::Seconds(10),
                    int family = AF_INET) {
  UniqueFd fd = Connect(port, timeout, family);
  if (!fd || !SendAll(fd.get(), request)) return "";
  return ReadToEnd(fd.get());
}

std::string Get(const std::string& target) {
  return absl::StrCat("GET ", target, " HTTP/1.0\r\nHost: localhost\r\n\r\n");
}

std::string StatusLine(const std::string& response) {
  return response.substr(0, response.find("\r\n"));
}

TEST(MetricsEndpointTest, ScrapesWhileSilentAndDrippingClientsWait) {
  auto out = Serve("127.0.0.1:0");
  ASSERT_NE(out, nullptr);
  int port = out->port();
  std::vector<UniqueFd> silent;
  for (int i = 0; i < 8; ++i) silent.push_back(Connect(port, absl::Seconds(8)));
  UniqueFd drip = Connect(port, absl::Seconds(8));
  std::atomic<bool> stop{false};
  std::thread dripper([&] {
    // One header byte every half second: a request that never completes.
    for (int i = 0; i < 20 && !stop; ++i) {
      if (!SendAll(drip.get(), "G")) return;
      absl::SleepFor(absl::Milliseconds(500));
    }
  });
  absl::SleepFor(absl::Milliseconds(300));  // all of them accepted

  absl::Time asked = absl::Now();
  std::string response = Request(port, Get("/metrics"), absl::Seconds(10));
  EXPECT_LT(absl::Now() - asked, absl::Seconds(2));
  EXPECT_EQ(StatusLine(response), "HTTP/1.1 200 OK");
  EXPECT_TRUE(absl::StrContains(response, "locus_build_info"));

  // Reading a request is bounded: the server lets go of every one of them
  // after a few seconds, the dripping one included.
  for (UniqueFd& fd : silent) {
    bool closed = false;
    ReadToEnd(fd.get(), &closed);
    EXPECT_TRUE(closed);
  }
  bool drip_closed = false;
  ReadToEnd(drip.get(), &drip_closed);
  EXPECT_TRUE(drip_closed);
  EXPECT_LT(absl::Now() - asked, absl::Seconds(6));
  stop = true;
  dripper.join();
}

TEST(MetricsEndpointTest, MoreSilentClientsThanThreadsDelayByOneTimeout) {
  auto out = Serve("127.0.0.1:0");
  ASSERT_NE(out, nullptr);
  std::vector<UniqueFd> silent;
  for (int i = 0; i < 24; ++i) {
    silent.push_back(Connect(out->port(), absl::Seconds(10)));
  }
  absl::SleepFor(absl::Milliseconds(300));
  absl::Time asked = absl::Now();
  std::string response = Request(out->port(), Get("/metrics"));
  EXPECT_EQ(StatusLine(response), "HTTP/1.1 200 OK");
  EXPECT_LT(absl::Now() - asked, absl::Seconds(7));
}

TEST(MetricsEndpointTest, ServesExactlyMetrics) {
  auto out = Serve("127.0.0.1:0");
  ASSERT_NE(out, nullptr);
  for (const char* path :
       {"/metricsx", "/metrics/x", "/metrics%00", "/metrics%2f", "/Metrics",
        "//metrics", "/", "/metrics/../metrics", "/x/../metrics"}) {
    std::string response = Request(out->port(), Get(path));
    EXPECT_TRUE(absl::StrContains(StatusLine(response), " 404 "))
        << path << ": " << StatusLine(response);
    EXPECT_FALSE(absl::StrContains(response, "locus_build_info")) << path;
  }
  // Other methods on /metrics: not served either.
  std::string post = Request(
      out->port(), "POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n");
  EXPECT_TRUE(absl::StrContains(StatusLine(post), " 404 ")) << post;
  EXPECT_FALSE(absl::StrContains(post, "locus_build_info"));
  for (const char* path : {"/metrics", "/metrics?name[]=locus_acting"}) {
    std::string response = Request(out->port(), Get(path));
    EXPECT_EQ(StatusLine(response), "HTTP/1.1 200 OK") << path;
    EXPECT_TRUE(absl::StrContains(response, "locus_build_info")) << path;
  }
}

// How many complete responses `stream` holds, each delimited by its
// Content-Length.
int CountResponses(const std::string& stream) {
  int count = 0;
  size_t at = 0;
  while (at < stream.size()) {
    size_t end = stream.find("\r\n\r\n", at);
    if (end == std::string::npos) break;
    std::string head = stream.substr(at, end - at);
    size_t field = head.find("Content-Length: ");
    size_t length = 0;
    if (field == std::string::npos ||
        !absl::SimpleAtoi(
            head.substr(field + 16, head.find('\r', field) - field - 16),
            &length)) {
      break;
    }
    if (!absl::StartsWith(head, "HTTP/1.1 200 OK")) break;
    at = end + 4 + length;
    if (at > stream.size()) break;
    ++count;
  }
  return count;
}

TEST(MetricsEndpointTest, AnswersEveryPipelinedRequest) {
  auto out = Serve("127.0.0.1:0");
  ASSERT_NE(out, nullptr);
  std::string requests;
  for (int i = 0; i < 199; ++i) {
    requests += "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n";
  }
  requests +=
      "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
  UniqueFd fd = Connect(out->port(), absl::Seconds(20));
  ASSERT_TRUE(SendAll(fd.get(), requests));
  bool closed = false;
  std::string stream = ReadToEnd(fd.get(), &closed);
  EXPECT_TRUE(closed);
  EXPECT_EQ(CountResponses(stream), 200);
}

TEST(MetricsEndpointTest, ReadsTheAddressStrictly) {
  for (const char* bad : {"127.0.0.1:+1",
                          "127.0.0.1:-1",
                          "127.0.0.1: 1",
                          "127.0.0.1:1 ",
                          " 127.0.0.1:1",
                          "127.0.0.1 :1",
                          "127.0.0.1:0x10",
                          "127.0.0.1:1.0",
                          "127.0.0.1:000009477",
                          "127.0.0.1:65536",
                          "127.0.0.1:",
                          "9477",
                          "localhost:9477",
                          "127.1:9477",
                          "[::1]:+1",
                          "[::1]",
                          "::1:9477",
                          "[::1:9477",
                          "[127.0.0.1]:9477",
                          "[fe80::1%lo]:9477"}) {
    absl::Status status = CheckListenAddress(bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(absl::StrContains(status.message(), bad)) << bad;
  }
  for (const char* good :
       {"127.0.0.1:9477", "0.0.0.0:1", "10.1.2.3:65535", "127.0.0.1:0"}) {
    EXPECT_TRUE(CheckListenAddress(good).ok()) << good;
  }
}

TEST(MetricsEndpointTest, Ipv6ServesWhereTheLibraryHasItElseRefusesClearly) {
  absl::Status checked = CheckListenAddress("[::1]:9477");
  if (!MetricsEndpointHasIpv6()) {
    // Debian 12's civetweb is built without USE_IPV6: the address is
    // refused when the flag is read, saying so, not by a bind that fails.
    EXPECT_EQ(checked.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(checked.message(), "IPv6 is not available"))
        << checked;
    MetricsExportOptions options;
    options.listen = "[::1]:0";
    auto started = MetricsExport::Start(options, {"1", "k"});
    EXPECT_EQ(started.status().code(), absl::StatusCode::kInvalidArgument);
    return;
  }
  ASSERT_TRUE(checked.ok()) << checked;
  auto out = Serve("[::1]:0");
  ASSERT_NE(out, nullptr);
  std::string response =
      Request(out->port(), Get("/metrics"), absl::Seconds(10), AF_INET6);
  EXPECT_EQ(StatusLine(response), "HTTP/1.1 200 OK");
}

}  // namespace
}  // namespace locus
