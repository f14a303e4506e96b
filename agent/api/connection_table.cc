#include "agent/api/connection_table.h"

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace locus {
namespace {

bool SameFile(int fd, dev_t dev, ino_t inode) {
  struct stat st;
  return fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == inode;
}

// Bytes written to socket `fd` that its peer has not read (for TCP: not
// acknowledged); 0 when the kernel does not say.
uint64_t OutQueue(int fd) {
  int bytes = 0;
  if (ioctl(fd, SIOCOUTQ, &bytes) != 0 || bytes < 0) return 0;
  return static_cast<uint64_t>(bytes);
}

// The fd number of a gRPC peer string ("fd:N"), or -1.
int PeerFd(const std::string& grpc_peer) {
  int fd = -1;
  if (!absl::StartsWith(grpc_peer, "fd:") ||
      !absl::SimpleAtoi(grpc_peer.substr(3), &fd)) {
    return -1;
  }
  return fd;
}

}  // namespace

absl::Status ConnectionTable::Admit(int fd, const ConnectionPeer& peer,
                                    int client_fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return absl::InternalError("fstat on a new socket");
  struct stat client = {};
  if (client_fd >= 0 && fstat(client_fd, &client) != 0) client_fd = -1;
  absl::MutexLock lock(&mu_);
  PruneLocked();
  size_t same_peer = 0;
  size_t unprivileged = 0;
  for (const auto& [unused, entry] : entries_) {
    if (entry.peer.key == peer.key) ++same_peer;
    if (!entry.peer.privileged) ++unprivileged;
  }
  const size_t max = limits_.max_connections;
  const size_t open = max - std::min(limits_.privileged_reserve, max);
  if (entries_.size() >= max) {
    return absl::ResourceExhaustedError(
        absl::StrCat("all ", max, " connections are taken"));
  }
  if (!peer.privileged && unprivileged >= open) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "all ", open, " connections open to unprivileged peers are taken"));
  }
  if (!peer.root && same_peer >= limits_.max_per_peer) {
    return absl::ResourceExhaustedError(absl::StrCat(
        peer.key, " already holds ", same_peer, " connections (the limit)"));
  }
  entries_[fd] = Entry{.dev = st.st_dev,
                       .inode = st.st_ino,
                       .peer = peer,
                       .client_fd = client_fd,
                       .client_dev = client.st_dev,
                       .client_inode = client.st_ino};
  return absl::OkStatus();
}

std::optional<ConnectionPeer> ConnectionTable::Lookup(
    const std::string& grpc_peer) const {
  const int fd = PeerFd(grpc_peer);
  if (fd < 0) return std::nullopt;
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(fd);
  if (it == entries_.end() || !SameFile(fd, it->second.dev, it->second.inode)) {
    return std::nullopt;
  }
  return it->second.peer;
}

uint64_t ConnectionTable::UnreadBytes(const std::string& grpc_peer) const {
  const int fd = PeerFd(grpc_peer);
  if (fd < 0) return 0;
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(fd);
  if (it == entries_.end()) return 0;
  const Entry& e = it->second;
  if (!SameFile(fd, e.dev, e.inode)) return 0;
  uint64_t bytes = OutQueue(fd);
  // The relay closes the client's socket once gRPC closed its end, and the
  // number may name another file by then: asked only while it is the same.
  if (e.client_fd >= 0 && SameFile(e.client_fd, e.client_dev, e.client_inode)) {
    bytes += OutQueue(e.client_fd);
  }
  return bytes;
}

size_t ConnectionTable::open_connections() {
  absl::MutexLock lock(&mu_);
  PruneLocked();
  return entries_.size();
}

void ConnectionTable::PruneLocked() {
  absl::erase_if(entries_, [](const auto& item) {
    return !SameFile(item.first, item.second.dev, item.second.inode);
  });
}

ConnectionLimits LimitsForNofile(ConnectionLimits wanted, size_t nofile) {
  ConnectionLimits limits = wanted;
  limits.max_connections = std::max<size_t>(
      1, std::min(wanted.max_connections, nofile / 4 / kFdsPerConnection));
  limits.privileged_reserve =
      std::min(wanted.privileged_reserve, limits.max_connections / 2);
  limits.max_per_peer = std::min(wanted.max_per_peer, limits.max_connections);
  return limits;
}

}  // namespace locus
