#include "agent/api/agent_server.h"

#include <fcntl.h>
#include <grp.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/server_posix.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/api/peer_credentials.h"
#include "common/log.h"
#include "common/os_error.h"
#include "common/status_macros.h"

namespace locus {
namespace {

absl::StatusOr<sockaddr_un> UnixAddress(const std::string& path) {
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("socket path '", path, "' must have 1 to ",
                     sizeof(addr.sun_path) - 1, " characters"));
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  return addr;
}

// A socket file left by a daemon that died is removed; one that still
// answers belongs to a running daemon and is left alone.
absl::Status ClearStaleSocket(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return LastErrnoStatus(absl::StrCat("socket ", path));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("socket ", path, " exists and is not a socket"));
  }
  ASSIGN_OR_RETURN(sockaddr_un addr, UnixAddress(path));
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return LastErrnoStatus("socket");
  int rc = connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  const int err = errno;
  if (rc == 0) {
    return absl::AlreadyExistsError(absl::StrCat(
        "socket ", path, " is served by another process (is locusd running?)"));
  }
  if (err != ECONNREFUSED) {
    return ErrnoStatus(absl::StrCat("probing socket ", path), err);
  }
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return LastErrnoStatus(absl::StrCat("removing stale socket ", path));
  }
  return absl::OkStatus();
}

absl::Status MakeParentDirectory(const std::string& socket_path, gid_t gid,
                                 mode_t mode) {
  std::filesystem::path parent =
      std::filesystem::path(socket_path).parent_path();
  if (parent.empty()) return absl::OkStatus();
  std::error_code ec;
  if (std::filesystem::exists(parent, ec)) return absl::OkStatus();
  std::filesystem::create_directories(parent, ec);
  if (ec) {
    return ErrnoStatus(absl::StrCat("creating ", parent.string()), ec.value());
  }
  // Group members must reach the socket; others need not.
  if (chmod(parent.c_str(), mode) != 0 ||
      chown(parent.c_str(), static_cast<uid_t>(-1), gid) != 0) {
    return LastErrnoStatus(
        absl::StrCat("setting owner and mode of ", parent.string()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> NormalizeTcpAddress(const std::string& address) {
  int port = 0;
  if (absl::SimpleAtoi(address, &port)) {
    if (port < 0 || port > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("TCP port ", address, " out of range"));
    }
    return absl::StrCat("127.0.0.1:", port);
  }
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("TCP address '", address, "' is not PORT or HOST:PORT"));
  }
  return address;
}

AgentServer::AgentServer(AgentServerOptions options, MetricsHub* hub,
                         AgentController* controller)
    : options_(std::move(options)), hub_(hub), controller_(controller) {}

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
  int wake[2];
  if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) return LastErrnoStatus("pipe2");
  wake_read_.reset(wake[0]);
  wake_write_.reset(wake[1]);
  RETURN_IF_ERROR(Listen());

  privileged_service_ = std::make_unique<AgentService>(
      hub_, controller_,
      AgentServiceOptions{.allow_mutations = true,
                          .socket_group_name = socket_group_name_});
  readonly_service_ = std::make_unique<AgentService>(
      hub_, controller_,
      AgentServiceOptions{.allow_mutations = false,
                          .socket_group_name = socket_group_name_});
  ASSIGN_OR_RETURN(privileged_server_,
                   BuildServer(privileged_service_.get(), false));
  ASSIGN_OR_RETURN(
      readonly_server_,
      BuildServer(readonly_service_.get(), !options_.tcp_address.empty()));
  acceptor_ = std::thread([this] { AcceptLoop(); });
  return absl::OkStatus();
}

absl::Status AgentServer::Listen() {
  const std::string& path = options_.socket_path;
  ASSIGN_OR_RETURN(sockaddr_un addr, UnixAddress(path));
  RETURN_IF_ERROR(
      MakeParentDirectory(path, socket_gid_, has_group() ? 0750 : 0700));
  RETURN_IF_ERROR(ClearStaleSocket(path));
  listen_fd_.reset(
      socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!listen_fd_) return LastErrnoStatus("socket");
  if (bind(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr),
           sizeof(addr)) != 0) {
    return LastErrnoStatus(absl::StrCat("bind ", path));
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return LastErrnoStatus(absl::StrCat("stat ", path));
  }
  socket_inode_ = st.st_ino;
  if (chown(path.c_str(), static_cast<uid_t>(-1), socket_gid_) != 0) {
    return LastErrnoStatus(absl::StrCat("chown ", path));
  }
  const mode_t mode =
      has_group() ? options_.socket_mode : options_.socket_mode & ~mode_t{070};
  if (chmod(path.c_str(), mode) != 0) {
    return LastErrnoStatus(absl::StrCat("chmod ", path));
  }
  if (listen(listen_fd_.get(), 64) != 0) {
    return LastErrnoStatus(absl::StrCat("listen ", path));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<grpc::Server>> AgentServer::BuildServer(
    AgentService* service, bool with_tcp) {
  grpc::ServerBuilder builder;
  builder.RegisterService(service);
  builder.SetMaxReceiveMessageSize(options_.max_request_bytes);
  builder.SetMaxSendMessageSize(options_.max_response_bytes);
  // A peer that vanished without closing (a TCP client behind a dead link)
  // would otherwise hold a stream, and its thread, forever.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 30'000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10'000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  grpc::ResourceQuota quota("locus-agent");
  quota.SetMaxThreads(options_.max_threads);
  builder.SetResourceQuota(quota);
  std::string tcp;
  if (with_tcp) {
    ASSIGN_OR_RETURN(tcp, NormalizeTcpAddress(options_.tcp_address));
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    builder.AddListeningPort(tcp, grpc::InsecureServerCredentials(),
                             &tcp_port_);
  }
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || (with_tcp && tcp_port_ == 0)) {
    return absl::UnavailableError(
        with_tcp ? absl::StrCat("cannot listen on TCP ", tcp)
                 : std::string("cannot start the gRPC server"));
  }
  return server;
}

void AgentServer::AcceptLoop() {
  while (!stopped_) {
    pollfd fds[2] = {{listen_fd_.get(), POLLIN, 0},
                     {wake_read_.get(), POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      LogError(ErrnoMessage("agent socket: poll", errno));
      return;
    }
    if (fds[1].revents != 0) return;
    UniqueFd fd(accept4(listen_fd_.get(), nullptr, nullptr,
                        SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!fd) {
      if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED) continue;
      // EMFILE and friends: back off instead of spinning.
      LogWarning(ErrnoMessage("agent socket: accept", errno));
      poll(nullptr, 0, 100);
      continue;
    }
    absl::StatusOr<PeerCredentials> peer = ReadPeerCredentials(fd.get());
    if (!peer.ok()) {
      LogWarning("agent socket: dropping a connection: ",
                 peer.status().message());
      continue;
    }
    const bool may_mutate =
        has_group() ? MayMutate(*peer, socket_gid_) : peer->uid == 0;
    grpc::Server* target =
        may_mutate ? privileged_server_.get() : readonly_server_.get();
    grpc::AddInsecureChannelFromFd(target, fd.release());  // gRPC owns it
  }
}

void AgentServer::Shutdown() {
  if (stopped_.exchange(true)) return;
  if (wake_write_) {
    char byte = 0;
    (void)!write(wake_write_.get(), &byte, 1);
  }
  if (acceptor_.joinable()) acceptor_.join();
  for (AgentService* s : {privileged_service_.get(), readonly_service_.get()}) {
    if (s != nullptr) s->Stop();
  }
  auto deadline = std::chrono::system_clock::now() + std::chrono::seconds(1);
  for (grpc::Server* s : {privileged_server_.get(), readonly_server_.get()}) {
    if (s != nullptr) s->Shutdown(deadline);
  }
  for (grpc::Server* s : {privileged_server_.get(), readonly_server_.get()}) {
    if (s != nullptr) s->Wait();
  }
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
