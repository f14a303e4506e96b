// Any bytes a client sends to /metrics's server (agent/api/metrics_http.h),
// over a real loopback connection, then its half close: the server answers
// or closes, never hangs or crashes, and serves the metrics only to a
// request line naming /metrics exactly, as many times as there are such
// lines at most (pipelining).
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "agent/api/listen_sockets.h"
#include "agent/api/metrics_http.h"
#include "fuzz_check.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"

namespace {

struct Server {
  std::shared_ptr<prometheus::Registry> registry =
      std::make_shared<prometheus::Registry>();
  std::unique_ptr<locus::MetricsHttp> http;
  int port = 0;
};

Server& TheServer() {
  static Server* server = [] {
    auto* s = new Server;
    prometheus::BuildCounter().Name("fuzz_marker_total").Register(*s->registry);
    auto listener = locus::ListenTcp("127.0.0.1:0");
    LOCUS_FUZZ_CHECK(listener.ok());
    s->port = listener->port;
    auto http = locus::MetricsHttp::Start(std::move(listener->fd), s->registry);
    LOCUS_FUZZ_CHECK(http.ok());
    s->http = std::move(*http);
    return s;
  }();
  return *server;
}

// Whether `fd` connects to `addr`. libFuzzer's timer signal interrupts a
// connect, which then goes on by itself: its end is waited for.
bool Connected(int fd, const sockaddr_in& addr) {
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) ==
      0) {
    return true;
  }
  if (errno != EINTR) return false;
  pollfd waiting = {fd, POLLOUT, 0};
  int polled;
  do {
    polled = poll(&waiting, 1, 10000);
  } while (polled < 0 && errno == EINTR);
  int error = 0;
  socklen_t len = sizeof(error);
  return polled == 1 &&
         getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 && error == 0;
}

// The response stream to `request`; empty if the connection was refused.
std::string Exchange(int port, std::string_view request) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  LOCUS_FUZZ_CHECK(fd >= 0);
  timeval tv = {10, 0};  // a hang is a broken invariant, not a wait
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  // Closed with a reset, not left in TIME_WAIT: thousands a second ran out
  // of ports. Each from another of 127.1.0.1 to .254, as many peers would.
  const linger reset = {1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  static uint32_t peer = 0;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  from.sin_addr.s_addr = htonl(0x7f010001 + peer++ % 254);
  LOCUS_FUZZ_CHECK(bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) ==
                   0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  LOCUS_FUZZ_CHECK(Connected(fd, addr));
  // The server may close before reading it all (a bad request): no check.
  for (size_t sent = 0; sent < request.size();) {
    ssize_t n =
        send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  std::string out;
  char buf[65536];
  bool timed_out = false;
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      timed_out = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
      break;
    }
  }
  close(fd);
  LOCUS_FUZZ_CHECK(!timed_out);
  return out;
}

size_t Count(std::string_view text, std::string_view what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string_view::npos;
       at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

// A field as libmicrohttpd 0.9.75 hands it over: a C string, so a raw NUL
// ends it ("GET<NUL>x" is GET, "/metrics<NUL>x" is /metrics; an encoded %00
// is not decoded, see metrics_http.h).
std::string_view UpToNul(std::string_view field) {
  return field.substr(0, field.find('\0'));
}

// Whether `line` is a request line the server may answer with the metrics,
// read as libmicrohttpd does: the method up to the first space, the path
// from after it (and any spaces) to the last space, then cut at '?'.
bool ServableLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const size_t first = line.find(' ');
  if (first == std::string_view::npos) return false;
  const std::string_view method = UpToNul(line.substr(0, first));
  std::string_view rest = line.substr(first + 1);
  rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
  const size_t trailing = rest.find_last_not_of(' ');
  const size_t last = trailing == std::string_view::npos
                          ? std::string_view::npos
                          : rest.rfind(' ', trailing);
  std::string_view path = UpToNul(rest.substr(0, last));
  path = path.substr(0, path.find('?'));
  return (method == "GET" || method == "HEAD") && path == "/metrics";
}

// How many lines of `request` may be answered with the metrics, split both
// at LF and at CR or LF (libmicrohttpd takes a bare CR as a line's end or
// not), so that the count is at least what the server may serve.
size_t ServableLines(std::string_view request) {
  size_t count = 0;
  for (std::string_view ends : {"\n", "\r\n"}) {
    for (size_t at = 0; at <= request.size();) {
      size_t end = std::min(request.find_first_of(ends, at), request.size());
      count += ServableLine(request.substr(at, end - at));
      at = end + 1;
    }
  }
  return count;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 8192) return 0;
  const std::string_view request(reinterpret_cast<const char*>(data), size);
  const std::string response = Exchange(TheServer().port, request);
  LOCUS_FUZZ_CHECK(response.empty() || response.rfind("HTTP/1.", 0) == 0);
  const size_t served = Count(response, " 200 OK\r\n");
  LOCUS_FUZZ_CHECK(served <= ServableLines(request));
  LOCUS_FUZZ_CHECK(served > 0 || Count(response, "fuzz_marker_total") == 0);
  return 0;
}
