// Serves locus.v1.Agent on a Unix socket (and on TCP when asked).
//
// gRPC 1.51 cannot tell a handler who is on the other end of a Unix socket,
// so this server owns the listening socket: it accepts each connection,
// reads the peer's credentials from the kernel (SO_PEERCRED/SO_PEERGROUPS),
// and hands the connection to one of two gRPC servers — one whose service
// allows SetMode/Restore (root, or the socket's group), one whose service
// refuses them. A connection's rights are thus fixed by which server owns
// it, with no lookup by fd number that a reused fd could fool. TCP peers
// have no credentials; the server accepts them too, and hands them to a
// third, read-only, server whose refusals say what TCP lacks.
//
// What no client may take from the agent: connections are capped (in all,
// per peer, and with a share kept for root and the socket's group) well
// below RLIMIT_NOFILE, so the control loop always has descriptors; HTTP/2
// pings are acked (gRPC bounds the acks a peer may leave unread); streams
// reset as soon as opened (HTTP/2 rapid reset), which gRPC 1.51 queues
// without bound, are metered by a relay in front of gRPC (frame_guard.h)
// that closes a connection resetting too fast; each server's memory is
// under a quota, and freed memory is given back to the system after a
// burst; metrics slots are shared as metrics_hub.h says.
#ifndef LOCUS_AGENT_API_AGENT_SERVER_H_
#define LOCUS_AGENT_API_AGENT_SERVER_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "agent/api/agent_controller.h"
#include "agent/api/agent_service.h"
#include "agent/api/connection_table.h"
#include "agent/api/frame_guard.h"
#include "agent/api/listen_sockets.h"
#include "agent/api/metrics_hub.h"
#include "common/defaults.h"
#include "common/unique_fd.h"

namespace grpc {
class Server;
}

namespace locus {

struct AgentServerOptions {
  std::string socket_path = kDefaultSocketPath;
  // A missing parent directory is created 0750 with the socket's group.
  mode_t socket_mode = 0660;
  // The socket's group, whose members may mutate. When no such group exists
  // on this host the socket is root's alone: group bits dropped (0600, the
  // directory 0700) and only uid 0 may mutate. Falling back to group root
  // instead would hand the socket to whoever happens to be in that group.
  std::string socket_group = "locus";
  // Empty: no TCP. "PORT" means 127.0.0.1:PORT; "HOST:PORT" as given; port 0
  // picks one (see tcp_port()). TCP peers are always read-only.
  std::string tcp_address;
  int max_request_bytes = 64 * 1024;  // larger requests: RESOURCE_EXHAUSTED
  int max_response_bytes = 64 * 1024 * 1024;
  int max_threads = 64;  // per gRPC server; streams hold one each
  // Connections accepted at once; lowered so that their descriptors (three
  // each, with the relay) take at most a quarter of RLIMIT_NOFILE.
  ConnectionLimits connections;
  FrameGuardOptions frames;
  int max_streams_per_connection = 16;
  size_t memory_quota_bytes = 32 << 20;  // per gRPC server
  // Kernel send buffer of each connection: what sits there is stale for a
  // reader that paused, so it stays small.
  int send_buffer_bytes = 64 * 1024;
  // Freed memory goes back to the system while RSS stands this much above
  // the lowest seen since start.
  size_t trim_growth_bytes = 8 << 20;
};

class AgentServer {
 public:
  // `hub` and `controller` must outlive the server.
  static absl::StatusOr<std::unique_ptr<AgentServer>> Start(
      AgentServerOptions options, MetricsHub* hub, AgentController* controller);
  ~AgentServer();  // Shutdown()
  AgentServer(const AgentServer&) = delete;
  AgentServer& operator=(const AgentServer&) = delete;

  // Stops accepting, ends streams, waits for calls in flight (about a
  // second at most), and removes the socket file. Idempotent.
  void Shutdown();

  const std::string& socket_path() const { return options_.socket_path; }
  gid_t socket_gid() const { return socket_gid_; }
  // The group name, or "" when the socket is root's alone.
  const std::string& socket_group_name() const { return socket_group_name_; }
  bool has_group() const { return !socket_group_name_.empty(); }
  int tcp_port() const { return tcp_port_; }
  // Connections closed for resetting streams too fast (frame_guard.h).
  uint64_t cut_off_connections() const { return guard_->cut_off(); }
  // Connections gRPC still holds open, and the limits in force.
  size_t open_connections() { return connections_.open_connections(); }
  const ConnectionLimits& connection_limits() const {
    return connections_.limits();
  }

 private:
  AgentServer(AgentServerOptions options, MetricsHub* hub,
              AgentController* controller);
  enum Kind { kPrivileged, kReadOnly, kTcp, kKinds };

  absl::Status Init();
  absl::Status Listen();
  absl::StatusOr<std::unique_ptr<grpc::Server>> BuildServer(
      AgentService* service, bool keepalive);
  std::unique_ptr<AgentService> MakeService(Kind kind);
  SubscriberInfo SubscriberOf(const std::string& grpc_peer,
                              bool privileged_server);
  void AcceptLoop();
  void AcceptOne(int listen_fd, bool tcp);
  void TrimIfGrown();

  const AgentServerOptions options_;
  MetricsHub* const hub_;
  AgentController* const controller_;
  gid_t socket_gid_ = 0;
  std::string socket_group_name_;  // "" when no such group exists
  UniqueFd listen_fd_;
  ino_t socket_inode_ = 0;
  UniqueFd tcp_listen_fd_;
  ConnectionTable connections_;
  // The lowest RSS seen, and when a trim may come next (acceptor thread).
  size_t floor_rss_ = 0;
  uint64_t next_trim_ns_ = 0;
  UniqueFd wake_read_;  // readable when Shutdown wants the acceptor to end
  UniqueFd wake_write_;
  int tcp_port_ = 0;
  std::unique_ptr<AgentService> services_[kKinds];
  std::unique_ptr<grpc::Server> servers_[kKinds];
  std::unique_ptr<FrameGuard> guard_;
  std::thread acceptor_;
  std::atomic<bool> stopped_{false};
};

}  // namespace locus

#endif  // LOCUS_AGENT_API_AGENT_SERVER_H_
