// The listening sockets the agent server accepts on itself: the Unix socket
// (mode, group, a stale file from a crashed daemon replaced, a live one left
// alone) and the optional TCP socket. Accepting both itself lets the server
// know every connection's peer and count them (see connection_table.h).
// The /metrics endpoint listens on the TCP one too (metrics_http.h).
#ifndef LOCUS_AGENT_API_LISTEN_SOCKETS_H_
#define LOCUS_AGENT_API_LISTEN_SOCKETS_H_

#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"
#include "common/unique_fd.h"

namespace locus {

struct UnixListener {
  UniqueFd fd;
  ino_t inode = 0;  // of the socket file, to remove only our own
};

// Binds and listens on `path` (non-blocking): a missing parent directory is
// made with `dir_mode` and group `gid`, the socket gets `mode` and `gid`.
absl::StatusOr<UnixListener> ListenUnix(const std::string& path, gid_t gid,
                                        mode_t mode, mode_t dir_mode);

struct TcpListener {
  UniqueFd fd;
  int port = 0;  // the one bound, when 0 was asked
};

// `address` as NormalizeTcpAddress returns it: "HOST:PORT", an IPv6 HOST in
// brackets ("[::1]:7070"); a name is bound at its first address. "[::]"
// takes IPv4 connections too (as ::ffff:a.b.c.d), on any host's setting.
absl::StatusOr<TcpListener> ListenTcp(const std::string& address);

// "7070" -> "127.0.0.1:7070"; "HOST:PORT" unchanged; INVALID_ARGUMENT else.
absl::StatusOr<std::string> NormalizeTcpAddress(const std::string& address);

}  // namespace locus

#endif  // LOCUS_AGENT_API_LISTEN_SOCKETS_H_
