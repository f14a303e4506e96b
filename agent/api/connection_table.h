// The connections the agent server accepted and handed to gRPC, with the
// peer of each, so that no class of client can take every connection (and
// with them the agent's file descriptors) and so that a stream's handler can
// learn who it serves for the metrics slots.
//
// gRPC closes a connection's fd without telling us; an entry is live while
// its fd number still names the very socket we accepted (same device and
// inode), and is pruned once it does not.
#ifndef LOCUS_AGENT_API_CONNECTION_TABLE_H_
#define LOCUS_AGENT_API_CONNECTION_TABLE_H_

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace locus {

struct ConnectionPeer {
  std::string key;          // "uid 1000", or "tcp 127.0.0.1" (no port)
  bool privileged = false;  // root or the socket's group, over the Unix socket
  bool root = false;        // uid 0 over the Unix socket
};

struct ConnectionLimits {
  size_t max_connections = 256;    // all peers together
  size_t privileged_reserve = 32;  // of those, kept for privileged peers
  size_t max_per_peer = 32;        // root is exempt
};

class ConnectionTable {
 public:
  explicit ConnectionTable(ConnectionLimits limits) : limits_(limits) {}

  // Records the freshly accepted socket `fd`, or says which limit refuses it
  // (RESOURCE_EXHAUSTED); the caller then closes it. `client_fd`, when the
  // relay stands between (frame_guard.h), is the client's own socket.
  absl::Status Admit(int fd, const ConnectionPeer& peer, int client_fd = -1);

  // The peer of the connection gRPC names `grpc_peer` ("fd:N" for the fds
  // handed to it), while fd N is still the socket admitted. Should N be
  // closed and reused between the call's arrival and this lookup, the answer
  // is the newer connection's peer: that only matters for a call whose
  // connection is gone, which ends within a poll interval.
  std::optional<ConnectionPeer> Lookup(const std::string& grpc_peer) const;

  // Bytes sent toward the client of `grpc_peer` that it has not read yet:
  // what waits in gRPC's socket and in the client's (SIOCOUTQ). 0 once the
  // connection is gone. Over TCP, what the client's kernel acknowledged
  // counts as read (its receive buffer is out of sight).
  uint64_t UnreadBytes(const std::string& grpc_peer) const;

  size_t open_connections();
  const ConnectionLimits& limits() const { return limits_; }

 private:
  struct Entry {
    dev_t dev = 0;
    ino_t inode = 0;
    ConnectionPeer peer;
    int client_fd = -1;  // the relay's, borrowed: checked before each use
    dev_t client_dev = 0;
    ino_t client_inode = 0;
  };
  void PruneLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ConnectionLimits limits_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<int, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

// What limits to use with `nofile` descriptors allowed: at most a quarter of
// them for clients (kFdsPerConnection each: the client's socket and the
// relay's pair), so the control loop always has the rest for /proc, sysfs,
// BPF and the journal.
inline constexpr size_t kFdsPerConnection = 3;
ConnectionLimits LimitsForNofile(ConnectionLimits wanted, size_t nofile);

}  // namespace locus

#endif  // LOCUS_AGENT_API_CONNECTION_TABLE_H_
