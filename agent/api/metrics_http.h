// The /metrics endpoint's HTTP server: libmicrohttpd's event loop (poll) on
// one thread of its own, answering GET and HEAD of exactly /metrics with the
// registry in the text exposition format, and 404 to anything else.
//
// One loop serves every connection, so a client that sends nothing, or a
// byte at a time, holds a connection slot, not a thread that a scrape waits
// for. Slots are bounded per peer address and in all (kPerPeerConnections,
// kConnections in the .cc): a peer over its share is closed at accept, and
// a connection idle for kIdleTimeoutSeconds is closed. A dripping client
// stays as long as it keeps sending, but only in its peer's slots.
#ifndef LOCUS_AGENT_API_METRICS_HTTP_H_
#define LOCUS_AGENT_API_METRICS_HTTP_H_

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/unique_fd.h"
#include "prometheus/registry.h"

struct MHD_Daemon;

namespace locus {

// Whether a request is one the endpoint answers with the metrics: GET or
// HEAD of the path "/metrics" exactly as sent (not percent-decoded: a
// decoded "/metrics%00" was "/metrics"). The query is not part of `path`,
// nor is anything after a raw NUL byte (libmicrohttpd 0.9.75 passes the
// path as a C string): such a request still gets only the metrics.
bool IsMetricsRequest(std::string_view method, std::string_view path);

class MetricsHttp {
 public:
  // Serves `registry` on `listener`, a bound and listening TCP socket (IPv4
  // or IPv6), which the server owns from then on.
  static absl::StatusOr<std::unique_ptr<MetricsHttp>> Start(
      UniqueFd listener, std::shared_ptr<prometheus::Registry> registry);
  // Stops the loop and closes the listener and every connection.
  ~MetricsHttp();
  MetricsHttp(const MetricsHttp&) = delete;
  MetricsHttp& operator=(const MetricsHttp&) = delete;

 private:
  explicit MetricsHttp(std::shared_ptr<prometheus::Registry> registry)
      : registry_(std::move(registry)) {}

  std::shared_ptr<prometheus::Registry> registry_;
  MHD_Daemon* daemon_ = nullptr;
};

}  // namespace locus

#endif  // LOCUS_AGENT_API_METRICS_HTTP_H_
