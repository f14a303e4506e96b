#include "agent/api/metrics_http.h"

#include <microhttpd.h>

#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "prometheus/text_serializer.h"

namespace locus {

namespace {

// A scraper (or an HA pair behind one address) needs one or two at a time;
// eight leave room for a person's curl beside them.
constexpr unsigned kPerPeerConnections = 8;
// All peers together: each costs a memory pool (libmicrohttpd's default,
// 32 KiB) and a file descriptor, nothing more.
constexpr unsigned kConnections = 256;
// Without a byte for this long a connection is closed: a silent client
// lets go of its slot, and so does an idle kept-alive one.
constexpr unsigned kIdleTimeoutSeconds = 3;

constexpr char kContentType[] = "text/plain; version=0.0.4; charset=utf-8";
constexpr char kNotFound[] = "only /metrics is served here\n";

// The path stays as the client sent it (see IsMetricsRequest).
size_t KeepEscapes(void*, MHD_Connection*, char* text) {
  return std::strlen(text);
}

MHD_Result Reply(MHD_Connection* connection, unsigned code,
                 const std::string& body) {
  MHD_Response* response = MHD_create_response_from_buffer(
      body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;  // out of memory: drop it
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
                          code == MHD_HTTP_OK ? kContentType : "text/plain");
  MHD_Result queued = MHD_queue_response(connection, code, response);
  MHD_destroy_response(response);
  return queued;
}

// Any non-null pointer: the request's headers were seen.
char kHeadersSeen;

// libmicrohttpd calls this once the request's headers are in, then for
// each piece of its body, then once more with none.
MHD_Result Answer(void* registry, MHD_Connection* connection, const char* url,
                  const char* method, const char*, const char*,
                  size_t* body_size, void** seen) {
  // A 404 goes at once: a response queued at the first call closes the
  // connection after it, whatever body or requests follow unread.
  if (!IsMetricsRequest(method, url)) {
    return Reply(connection, MHD_HTTP_NOT_FOUND, kNotFound);
  }
  // The metrics wait for the last call, so that the connection is kept
  // and pipelined requests after this one are answered too.
  if (*seen == nullptr || *body_size != 0) {
    *seen = &kHeadersSeen;
    *body_size = 0;  // a body sent with GET is read and dropped
    return MHD_YES;
  }
  const auto* metrics = static_cast<const prometheus::Registry*>(registry);
  return Reply(connection, MHD_HTTP_OK,
               prometheus::TextSerializer().Serialize(metrics->Collect()));
}

}  // namespace

bool IsMetricsRequest(std::string_view method, std::string_view path) {
  return (method == "GET" || method == "HEAD") && path == "/metrics";
}

absl::StatusOr<std::unique_ptr<MetricsHttp>> MetricsHttp::Start(
    UniqueFd listener, std::shared_ptr<prometheus::Registry> registry) {
  std::unique_ptr<MetricsHttp> http(new MetricsHttp(std::move(registry)));
  // No MHD_USE_ERROR_LOG: a peer refused over its share would be a line
  // each, and what start can fail on (the bind) is done by the caller.
  // poll, not epoll: in epoll mode 0.9.75 missed a close that came with
  // the last bytes of an incomplete request, and kept the connection until
  // the idle timeout; poll over at most 257 descriptors costs nothing.
  http->daemon_ = MHD_start_daemon(
      MHD_USE_POLL_INTERNAL_THREAD, 0, nullptr, nullptr, &Answer,
      http->registry_.get(), MHD_OPTION_LISTEN_SOCKET, listener.get(),
      MHD_OPTION_CONNECTION_LIMIT, kConnections,
      MHD_OPTION_PER_IP_CONNECTION_LIMIT, kPerPeerConnections,
      MHD_OPTION_CONNECTION_TIMEOUT, kIdleTimeoutSeconds,
      MHD_OPTION_UNESCAPE_CALLBACK, &KeepEscapes, nullptr, MHD_OPTION_END);
  if (http->daemon_ == nullptr) {
    return absl::InternalError(
        "libmicrohttpd did not start (no thread, no poll() support or no "
        "memory)");
  }
  listener.release();  // closed by MHD_stop_daemon
  return http;
}

MetricsHttp::~MetricsHttp() {
  if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
}

}  // namespace locus
