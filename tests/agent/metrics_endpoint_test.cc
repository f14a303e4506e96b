// The /metrics endpoint against clients that are not Prometheus: silent
// or dripping connections, hundreds of them from one peer, must not delay
// another peer's scrape; only /metrics itself is served; pipelined requests
// are all answered; the address is read strictly, IPv6 included.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <iostream>
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
#include "tests/agent/scrape.h"

namespace locus {
namespace {

std::unique_ptr<MetricsExport> Serve(const std::string& address) {
  MetricsExportOptions options;
  options.listen = address;
  auto started = MetricsExport::Start(options, {"1", "k"});
  EXPECT_TRUE(started.ok()) << started.status();
  return started.ok() ? std::move(*started) : nullptr;
}

// A loopback connection whose reads give up after `timeout`; from `from`
// (an IPv4 loopback address: Linux routes all of 127/8 to lo) if given.
UniqueFd Connect(int port, absl::Duration timeout, int family = AF_INET,
                 const char* from = nullptr) {
  UniqueFd fd(socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  timeval tv = absl::ToTimeval(timeout);
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_storage storage;
  const socklen_t len = LoopbackAddress(family, port, storage);
  if (from != nullptr) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    inet_pton(AF_INET, from, &local.sin_addr);
    if (bind(fd.get(), reinterpret_cast<sockaddr*>(&local), sizeof(local))) {
      ADD_FAILURE() << "bind " << from << ": " << strerror(errno);
      return UniqueFd();
    }
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
                    int family = AF_INET, const char* from = nullptr) {
  UniqueFd fd = Connect(port, timeout, family, from);
  if (!fd || !SendAll(fd.get(), request)) return "";
  return ReadToEnd(fd.get());
}

std::string Get(const std::string& target) {
  return absl::StrCat("GET ", target, " HTTP/1.0\r\nHost: localhost\r\n\r\n");
}

std::string StatusLine(const std::string& response) {
  return response.substr(0, response.find("\r\n"));
}

// The peer the slow clients come from, and another one: a scraper.
constexpr char kSlowPeer[] = "127.0.0.1";
constexpr char kScraper[] = "127.0.0.2";

// Whether the server has closed `fd` (read gives end or reset) by now.
bool ClosedWithin(int fd, absl::Duration wait) {
  timeval tv = absl::ToTimeval(wait);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  bool closed = false;
  ReadToEnd(fd, &closed);
  return closed;
}

// A scrape from kScraper: its response, and how long it took.
std::string TimedScrape(int port, absl::Duration* took) {
  absl::Time asked = absl::Now();
  std::string response =
      Request(port, Get("/metrics"), absl::Seconds(10), AF_INET, kScraper);
  *took = absl::Now() - asked;
  return response;
}

// Clients that each send one header byte per `period`, never a whole
// request, until stopped; a connection the server closed is left alone.
// All from kSlowPeer, or each from a peer of its own (127.0.1.N).
class Drippers {
 public:
  Drippers(int port, int count, absl::Duration period, bool one_peer = true) {
    for (int i = 0; i < count; ++i) {
      std::string from = one_peer ? kSlowPeer : absl::StrCat("127.0.1.", i + 1);
      fds_.push_back(Connect(port, absl::Seconds(1), AF_INET, from.c_str()));
    }
    alive_ = count;
    thread_ = std::thread([this, period] {
      while (!stop_) {
        for (UniqueFd& fd : fds_) {
          if (fd && !SendAll(fd.get(), "G")) {
            fd.reset();
            --alive_;
          }
        }
        absl::SleepFor(period);
      }
    });
  }
  ~Drippers() {
    stop_ = true;
    thread_.join();
  }
  // How many the server has not closed (as far as a send can tell).
  int alive() const { return alive_; }

 private:
  std::vector<UniqueFd> fds_;
  std::atomic<int> alive_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(MetricsEndpointTest, ScrapesWhileSilentAndDrippingClientsWait) {
  auto out = Serve("127.0.0.1:0");
  ASSERT_NE(out, nullptr);
  int port = out->port();
  std::vector<UniqueFd> silent;
  for (int i = 0; i < 7; ++i) {
    silent.push_back(Connect(port, absl::Seconds(8), AF_INET, kSlowPeer));
  }
  Drippers drip(port, 1, absl::Milliseconds(500));
  absl::SleepFor(absl::Milliseconds(300));  // all of them accepted

  absl::Duration took;
  std::string response = TimedScrape(port, &took);
  EXPECT_LT(took, absl::Seconds(2));
  EXPECT_EQ(StatusLine(response), "HTTP/1.1 200 OK");
  EXPECT_TRUE(absl::StrContains(response, "locus_build_info"));
  // An idle connection is let go after a few seconds.
  absl::Time since = absl::Now();
  for (UniqueFd& fd : silent)
    EXPECT_TRUE(ClosedWithin(fd.get(), absl::Seconds(8)));
  EXPECT_LT(absl::Now() - since, absl::Seconds(6));
}

// The per-peer share: a ninth connection from a peer holding eight is
// closed at once, and another peer is served.
TEST(MetricsEndpointTest, APeerOverItsShareIsClosedAtAccept) {
  auto out = Serve("127.0.0.1:0");
  ASSERT_NE(out, nullptr);
  std::vector<UniqueFd> silent;
  for (int i = 0; i < 8; ++i) {
    silent.push_back(
        Connect(out->port(), absl::Seconds(10), AF_INET, kSlowPeer));
  }
  absl::SleepFor(absl::Milliseconds(300));
  UniqueFd ninth = Connect(out->port(), absl::Seconds(10), AF_INET, kSlowPeer);
  absl::Time asked = absl::Now();
  EXPECT_TRUE(ClosedWithin(ninth.get(), absl::Seconds(10)));
  EXPECT_LT(absl::Now() - asked, absl::Seconds(1));
  absl::Duration took;
  EXPECT_EQ(StatusLine(TimedScrape(out->port(), &took)), "HTTP/1.1 200 OK");
  EXPECT_LT(took, absl::Seconds(2));
}

// Issue #39's figures: 200 silent connections took a scrape 35.5 s, 100
// dripping ones 17 s. Now a scrape from another peer is answered at once,
// before and after the silent ones time out, while the drip goes on.
TEST(MetricsEndpointTest, HundredsOfSlowConnectionsFromOnePeer) {
  auto out = Serve("127.0.0.1:0");
  ASSERT_NE(out, nullptr);
  int port = out->port();
  std::vector<UniqueFd> silent;
  for (int i = 0; i < 200; ++i) {
    silent.push_back(Connect(port, absl::Seconds(1), AF_INET, kSlowPeer));
  }
  Drippers drip(port, 100, absl::Milliseconds(200));
  for (int scrape = 0; scrape < 4; ++scrape) {
    absl::Duration took;
    std::string response = TimedScrape(port, &took);
    EXPECT_EQ(StatusLine(response), "HTTP/1.1 200 OK") << scrape;
    EXPECT_LT(took, absl::Seconds(2)) << scrape;
    std::cout << "scrape " << scrape
              << " beside 300 slow connections: " << absl::FormatDuration(took)
              << "\n";
    absl::SleepFor(absl::Seconds(1));
  }
}

// Drippers from many peers, each within its share, are all kept while they
// drip, past the idle timeout, and the one loop still answers a scrape at
// once: a slow connection costs a slot, not a thread.
TEST(MetricsEndpointTest, DrippersFromManyPeersDoNotDelayAScrape) {
  auto out = Serve("127.0.0.1:0");
  ASSERT_NE(out, nullptr);
  Drippers drip(out->port(), 100, absl::Milliseconds(200), /*one_peer=*/false);
  for (int scrape = 0; scrape < 4; ++scrape) {
    absl::Duration took;
    std::string response = TimedScrape(out->port(), &took);
    EXPECT_EQ(StatusLine(response), "HTTP/1.1 200 OK") << scrape;
    EXPECT_LT(took, absl::Seconds(2)) << scrape;
    absl::SleepFor(absl::Seconds(1));
  }
  EXPECT_EQ(drip.alive(), 100);
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
    EXPECT_TRUE(absl::StrContains(response, "text/plain; version=0.0.4"));
  }
  // HEAD: the same head, no body.
  std::string head =
      Request(out->port(), "HEAD /metrics HTTP/1.0\r\nHost: x\r\n\r\n");
  EXPECT_EQ(StatusLine(head), "HTTP/1.1 200 OK") << head;
  EXPECT_FALSE(absl::StrContains(head, "locus_build_info"));
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
  EXPECT_EQ(CountResponses(stream), 200) << stream.substr(0, 300);
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
       {"127.0.0.1:9477", "0.0.0.0:1", "10.1.2.3:65535", "127.0.0.1:0",
        "[::1]:9477", "[::]:0", "[2001:db8::1]:80", "[::ffff:127.0.0.1]:1"}) {
    EXPECT_TRUE(CheckListenAddress(good).ok()) << good;
  }
}

// Whether this host has an IPv6 loopback to test on (a container may not).
bool HasIpv6Loopback() {
  UniqueFd fd(socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_addr = in6addr_loopback;
  return fd &&
         bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
}

TEST(MetricsEndpointTest, ServesOnIpv6Loopback) {
  if (!HasIpv6Loopback()) GTEST_SKIP() << "no IPv6 loopback here";
  auto out = Serve("[::1]:0");
  ASSERT_NE(out, nullptr);
  std::string response =
      Request(out->port(), Get("/metrics"), absl::Seconds(10), AF_INET6);
  EXPECT_EQ(StatusLine(response), "HTTP/1.1 200 OK");
  EXPECT_TRUE(absl::StrContains(response, "locus_build_info"));
  std::string other =
      Request(out->port(), Get("/metricsx"), absl::Seconds(10), AF_INET6);
  EXPECT_TRUE(absl::StrContains(StatusLine(other), " 404 ")) << other;
}

// "[::]" is every address, IPv4's included, as it is for most servers.
TEST(MetricsEndpointTest, EveryAddressTakesIpv4Too) {
  if (!HasIpv6Loopback()) GTEST_SKIP() << "no IPv6 loopback here";
  auto out = Serve("[::]:0");
  ASSERT_NE(out, nullptr);
  for (int family : {AF_INET6, AF_INET}) {
    std::string response =
        Request(out->port(), Get("/metrics"), absl::Seconds(10), family);
    EXPECT_EQ(StatusLine(response), "HTTP/1.1 200 OK") << family;
  }
}

}  // namespace
}  // namespace locus
