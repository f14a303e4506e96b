#include "agent/api/agent_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/server_posix.h>
#include <malloc.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/api/peer_credentials.h"
#include "common/clock.h"
#include "common/file_read.h"
#include "common/log.h"
#include "common/os_error.h"
#include "common/status_macros.h"

namespace locus {
namespace {

// How often the acceptor looks at RSS when no connection arrives.
constexpr int kTrimCheckMs = 1000;

size_t NofileLimit() {
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 ||
      limit.rlim_cur == RLIM_INFINITY) {
    return 1 << 20;
  }
  return limit.rlim_cur;
}

size_t ResidentBytes() {
  absl::StatusOr<std::string> text =
      ReadRegularFile("/proc/self/statm", {.max_bytes = 4096});
  if (!text.ok()) return 0;
  unsigned long pages = 0, resident = 0;
  int n = std::sscanf(text->c_str(), "%lu %lu", &pages, &resident);
  return n == 2 ? resident * static_cast<size_t>(sysconf(_SC_PAGESIZE)) : 0;
}

// "tcp 127.0.0.1": the address without the port, so that one host is one
// peer however many connections it opens.
std::string TcpPeerKey(const sockaddr_storage& addr) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (addr.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&addr)->sin_addr,
              text, sizeof(text));
  } else if (addr.ss_family == AF_INET6) {
    inet_ntop(AF_INET6,
              &reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_addr, text,
              sizeof(text));
  }
  return absl::StrCat("tcp ", text);
}

}  // namespace

AgentServer::AgentServer(AgentServerOptions options, MetricsHub* hub,
                         AgentController* controller)
    : options_(std::move(options)),
      hub_(hub),
      controller_(controller),
      connections_(LimitsForNofile(options_.connections, NofileLimit())) {}

absl::StatusOr<std::unique_ptr<AgentServer>> AgentServer::Start(
    AgentServerOptions options, MetricsHub* hub, AgentController* controller) {
  std::unique_ptr<AgentServer> server(
      new AgentServer(std::move(options), hub, controller));
  // On failure the server goes, and its destructor undoes what Init did.
  RETURN_IF_ERROR(server->Init());
  return server;
}

absl::Status AgentServer::Init() {
  if (struct group* g = getgrnam(options_.socket_group.c_str())) {
    socket_gid_ = g->gr_gid;
    socket_group_name_ = options_.socket_group;
  } else {
    socket_gid_ = 0;
    LogWarning("no group '", options_.socket_group, "' on this host: socket ",
               options_.socket_path,
               " is root's alone (0600); create the group (the package does) "
               "to let its members use locusctl");
  }
  // Every gRPC thread may otherwise get its own malloc arena, and a burst
  // of client traffic then leaves memory spread over dozens of them that
  // malloc_trim cannot give back.
  mallopt(M_ARENA_MAX, 4);
  int wake[2];
  if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) return LastErrnoStatus("pipe2");
  wake_read_.reset(wake[0]);
  wake_write_.reset(wake[1]);
  RETURN_IF_ERROR(Listen());
  for (Kind kind : {kPrivileged, kReadOnly, kTcp}) {
    if (kind == kTcp && !tcp_listen_fd_) continue;
    services_[kind] = MakeService(kind);
    // Only TCP needs keepalive pings: a Unix peer that dies closes its
    // socket, and one that is merely paused (a stopped `locusctl watch`)
    // keeps its stream, losing ticks, until the hub drops it as stalled.
    ASSIGN_OR_RETURN(servers_[kind],
                     BuildServer(services_[kind].get(), kind == kTcp));
  }
  ASSIGN_OR_RETURN(guard_, FrameGuard::Start(options_.frames));
  floor_rss_ = ResidentBytes();
  acceptor_ = std::thread([this] { AcceptLoop(); });
  return absl::OkStatus();
}

std::unique_ptr<AgentService> AgentServer::MakeService(Kind kind) {
  const bool privileged = kind == kPrivileged;
  AgentServiceOptions o;
  o.allow_mutations = privileged;
  o.over_tcp = kind == kTcp;
  o.socket_group_name = socket_group_name_;
  o.socket_path = options_.socket_path;
  o.subscriber_of = [this, privileged](const std::string& grpc_peer) {
    return SubscriberOf(grpc_peer, privileged);
  };
  return std::make_unique<AgentService>(hub_, controller_, std::move(o));
}

SubscriberInfo AgentServer::SubscriberOf(const std::string& grpc_peer,
                                         bool privileged_server) {
  SubscriberInfo info;
  std::optional<ConnectionPeer> peer = connections_.Lookup(grpc_peer);
  info.peer = peer.has_value() ? peer->key : "unknown peer";
  // The server a connection was handed to bounds its rights: a lookup
  // can never raise a read-only connection.
  info.privileged = privileged_server && peer.has_value() && peer->privileged;
  info.root = info.privileged && peer->root;
  info.unread_bytes = [this, grpc_peer] {
    return connections_.UnreadBytes(grpc_peer);
  };
  return info;
}

absl::Status AgentServer::Listen() {
  ASSIGN_OR_RETURN(UnixListener unix_listener,
                   ListenUnix(options_.socket_path, socket_gid_,
                              has_group() ? options_.socket_mode
                                          : options_.socket_mode & ~mode_t{070},
                              has_group() ? 0750 : 0700));
  listen_fd_ = std::move(unix_listener.fd);
  socket_inode_ = unix_listener.inode;
  if (!options_.tcp_address.empty()) {
    ASSIGN_OR_RETURN(std::string address,
                     NormalizeTcpAddress(options_.tcp_address));
    ASSIGN_OR_RETURN(TcpListener tcp, ListenTcp(address));
    tcp_listen_fd_ = std::move(tcp.fd);
    tcp_port_ = tcp.port;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<grpc::Server>> AgentServer::BuildServer(
    AgentService* service, bool keepalive) {
  grpc::ServerBuilder builder;
  builder.RegisterService(service);
  builder.SetMaxReceiveMessageSize(options_.max_request_bytes);
  builder.SetMaxSendMessageSize(options_.max_response_bytes);
  if (keepalive) {
    // A peer that vanished without closing (a TCP client behind a dead
    // link) would otherwise hold a stream, and its thread, forever.
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 30'000);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10'000);
  } else {
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, INT_MAX);
  }
  // A client's pings are acked, never punished: in gRPC 1.51 each ping past
  // the strike limit adds a child error to the delayed close of the
  // connection (about 2 kB each, kept until the burst is read), so a burst
  // of 20,000 pings cost 40 MB and quadratic CPU. Acks alone are bounded:
  // gRPC stops reading a connection with 10,000 frames owed to a peer that
  // does not read them.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             options_.max_streams_per_connection);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, 120'000);
  grpc::ResourceQuota quota("locus-agent");
  quota.SetMaxThreads(options_.max_threads);
  quota.Resize(options_.memory_quota_bytes);
  builder.SetResourceQuota(quota);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    return absl::UnavailableError("cannot start the gRPC server");
  }
  return server;
}

void AgentServer::AcceptLoop() {
  while (!stopped_) {
    pollfd fds[3] = {{wake_read_.get(), POLLIN, 0},
                     {listen_fd_.get(), POLLIN, 0},
                     {tcp_listen_fd_ ? tcp_listen_fd_.get() : -1, POLLIN, 0}};
    if (poll(fds, 3, kTrimCheckMs) < 0) {
      if (errno == EINTR) continue;
      LogError(ErrnoMessage("agent socket: poll", errno));
      return;
    }
    if (fds[0].revents != 0) return;
    if (fds[1].revents != 0) AcceptOne(listen_fd_.get(), false);
    if (fds[2].revents != 0) AcceptOne(tcp_listen_fd_.get(), true);
    TrimIfGrown();
  }
}

void AgentServer::AcceptOne(int listen_fd, bool tcp) {
  sockaddr_storage addr = {};
  socklen_t len = sizeof(addr);
  UniqueFd fd(accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len,
                      SOCK_CLOEXEC | SOCK_NONBLOCK));
  if (!fd) {
    if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED) return;
    // EMFILE and friends: back off instead of spinning.
    LogWarning(ErrnoMessage("agent socket: accept", errno));
    poll(nullptr, 0, 100);
    return;
  }
  ConnectionPeer peer;
  Kind kind = kTcp;
  if (tcp) {
    peer.key = TcpPeerKey(addr);
  } else {
    absl::StatusOr<PeerCredentials> cred = ReadPeerCredentials(fd.get());
    if (!cred.ok()) {
      LogWarning("agent socket: dropping a connection: ",
                 cred.status().message());
      return;
    }
    peer.key = absl::StrCat("uid ", cred->uid);
    peer.root = cred->uid == 0;
    peer.privileged =
        has_group() ? MayMutate(*cred, socket_gid_) : cred->uid == 0;
    kind = peer.privileged ? kPrivileged : kReadOnly;
  }
  absl::StatusOr<FrameGuard::Pair> pair = guard_->NewPair();
  if (!pair.ok()) {
    LogWarning("agent socket: dropping a connection: ",
               pair.status().message());
    return;
  }
  // Refused: closed at once, so the client learns it now rather than at
  // its deadline. Not logged: a flood would only fill the log. Admitted by
  // the descriptor gRPC holds, which is what its peer string names.
  if (!connections_.Admit(pair->grpc_end.get(), peer, fd.get()).ok()) return;
  setsockopt(fd.get(), SOL_SOCKET, SO_SNDBUF, &options_.send_buffer_bytes,
             sizeof(options_.send_buffer_bytes));
  guard_->Relay(std::move(fd), std::move(pair->relay_end), peer.key);
  grpc::AddInsecureChannelFromFd(servers_[kind].get(),
                                 pair->grpc_end.release());
}

// Bursts of client traffic (thousands of streams) leave freed memory in
// malloc's free lists; give it back while RSS stands above the lowest seen.
// A trim while the burst's memory is still in use gives little back, so the
// next one comes a check later rather than never (or at every accept).
void AgentServer::TrimIfGrown() {
  const uint64_t now = MonotonicNs();
  if (now < next_trim_ns_) return;
  size_t rss = ResidentBytes();
  floor_rss_ = std::min(floor_rss_, rss);
  if (rss < floor_rss_ + options_.trim_growth_bytes) return;
  malloc_trim(0);
  next_trim_ns_ = now + uint64_t{kTrimCheckMs} * 1'000'000;
}

void AgentServer::Shutdown() {
  if (stopped_.exchange(true)) return;
  if (wake_write_) {
    char byte = 0;
    (void)!write(wake_write_.get(), &byte, 1);
  }
  if (acceptor_.joinable()) acceptor_.join();
  for (auto& s : services_) {
    if (s != nullptr) s->Stop();
  }
  auto deadline = std::chrono::system_clock::now() + std::chrono::seconds(1);
  for (auto& s : servers_) {
    if (s != nullptr) s->Shutdown(deadline);
  }
  for (auto& s : servers_) {
    if (s != nullptr) s->Wait();
  }
  if (guard_ != nullptr) guard_->Stop();
  tcp_listen_fd_.reset();
  if (listen_fd_) {
    listen_fd_.reset();
    // Only our own socket file: a successor may already have replaced it.
    struct stat st;
    if (stat(options_.socket_path.c_str(), &st) == 0 &&
        st.st_ino == socket_inode_) {
      unlink(options_.socket_path.c_str());
    }
  }
  wake_read_.reset();
  wake_write_.reset();
}

AgentServer::~AgentServer() { Shutdown(); }

}  // namespace locus
