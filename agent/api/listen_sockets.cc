#include "agent/api/listen_sockets.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/os_error.h"
#include "common/status_macros.h"

namespace locus {
namespace {

constexpr int kBacklog = 64;

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

absl::StatusOr<UnixListener> ListenUnix(const std::string& path, gid_t gid,
                                        mode_t mode, mode_t dir_mode) {
  ASSIGN_OR_RETURN(sockaddr_un addr, UnixAddress(path));
  RETURN_IF_ERROR(MakeParentDirectory(path, gid, dir_mode));
  RETURN_IF_ERROR(ClearStaleSocket(path));
  UnixListener listener;
  listener.fd.reset(
      socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!listener.fd) return LastErrnoStatus("socket");
  if (bind(listener.fd.get(), reinterpret_cast<sockaddr*>(&addr),
           sizeof(addr)) != 0) {
    return LastErrnoStatus(absl::StrCat("bind ", path));
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return LastErrnoStatus(absl::StrCat("stat ", path));
  }
  listener.inode = st.st_ino;
  if (chown(path.c_str(), static_cast<uid_t>(-1), gid) != 0) {
    return LastErrnoStatus(absl::StrCat("chown ", path));
  }
  if (chmod(path.c_str(), mode) != 0) {
    return LastErrnoStatus(absl::StrCat("chmod ", path));
  }
  if (listen(listener.fd.get(), kBacklog) != 0) {
    return LastErrnoStatus(absl::StrCat("listen ", path));
  }
  return listener;
}

absl::StatusOr<TcpListener> ListenTcp(const std::string& address) {
  const size_t colon = address.rfind(':');
  std::string host = address.substr(0, colon);
  const std::string port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints = {};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
      rc != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("TCP address '", address, "': ", gai_strerror(rc)));
  }
  TcpListener listener;
  listener.fd.reset(
      socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  const int one = 1;
  // [::] is every address, IPv4's too, whatever net.ipv6.bindv6only says.
  const int v6only = 0;
  absl::Status status;
  if (!listener.fd) {
    status = LastErrnoStatus("socket");
  } else if (setsockopt(listener.fd.get(), SOL_SOCKET, SO_REUSEADDR, &one,
                        sizeof(one)) != 0 ||
             (found->ai_family == AF_INET6 &&
              setsockopt(listener.fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &v6only,
                         sizeof(v6only)) != 0) ||
             bind(listener.fd.get(), found->ai_addr, found->ai_addrlen) != 0 ||
             listen(listener.fd.get(), kBacklog) != 0) {
    status = LastErrnoStatus(absl::StrCat("cannot listen on TCP ", address));
  }
  freeaddrinfo(found);
  RETURN_IF_ERROR(status);
  sockaddr_storage bound = {};
  socklen_t len = sizeof(bound);
  if (getsockname(listener.fd.get(), reinterpret_cast<sockaddr*>(&bound),
                  &len) != 0) {
    return LastErrnoStatus("getsockname");
  }
  listener.port = ntohs(bound.ss_family == AF_INET6
                            ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return listener;
}

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

}  // namespace locus
