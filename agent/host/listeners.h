// The TCP listening sockets of one nginx instance, grouped as the kernel
// groups them for SO_REUSEPORT (netns + family + address + port), with the
// worker that accepts on each and a (pid, fd) to duplicate it through
// (pidfd_getfd): what connection steering attaches its sk_reuseport program
// to. Read through a procfs root so fixture trees stand in for /proc:
// /proc/PID/ns/net, fd/, fdinfo/ (epoll sets) and net/tcp{,6}. UDP is never
// read: nginx attaches its own program to its QUIC groups.
#ifndef LOCUS_AGENT_HOST_LISTENERS_H_
#define LOCUS_AGENT_HOST_LISTENERS_H_

#include <array>
#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace locus {

// A local address and port as a listening socket is bound to.
struct ListenAddress {
  int family = 0;                   // AF_INET or AF_INET6
  std::array<uint8_t, 16> bytes{};  // network byte order; IPv4: first 4
  uint16_t port = 0;                // host byte order
  auto operator<=>(const ListenAddress&) const = default;
};

// "0.0.0.0:80", "[::1]:443".
std::string ListenAddressString(const ListenAddress& address);

// A LISTEN row of /proc/PID/net/tcp or tcp6.
struct TcpListenRow {
  ListenAddress address;
  uint64_t inode = 0;
};

// What a net/tcp table holds in LISTEN state (st 0A); other states are
// skipped unread. A malformed line is left out and reported as "line N:
// why" in `errors`, so one bad row never hides the others.
struct TcpTable {
  std::vector<TcpListenRow> listeners;
  std::vector<std::string> errors;
};
// `family` says which table the text is (AF_INET: net/tcp, AF_INET6:
// net/tcp6). The kernel prints each address word as a host-order integer
// ("0100007F" is 127.0.0.1 on a little-endian host), the port as a number.
TcpTable ParseTcpTable(absl::string_view text, int family);

// One `tfd:` line of an epoll fdinfo: a file in the epoll set.
struct EpollTarget {
  int fd = -1;         // as the owner numbered it when it was added
  uint64_t inode = 0;  // `ino:`, printed in hex
};
struct EpollSet {
  std::vector<EpollTarget> targets;
  std::vector<std::string> errors;  // "line N: why"
};
// /proc/PID/fdinfo/N of an `anon_inode:[eventpoll]` fd.
EpollSet ParseEpollFdinfo(absl::string_view text);

// What a /proc/PID/fd/N link names.
struct FdLink {
  enum class Kind { kOther, kSocket, kEpoll };
  Kind kind = Kind::kOther;
  uint64_t inode = 0;  // sockets only
};
// "socket:[123]", "anon_inode:[eventpoll]", anything else (files, pipes) is
// kOther. An error only for a socket link without a number.
absl::StatusOr<FdLink> ParseFdLink(absl::string_view link);

// The inode of a network namespace from its /proc/PID/ns/net link
// ("net:[4026531840]").
absl::StatusOr<uint64_t> ParseNetNsLink(absl::string_view link);

// One nginx instance, as the target scan found it.
struct NginxInstance {
  int32_t master_pid = 0;
  std::vector<int32_t> worker_pids;
};

// How the kernel groups reuseport sockets (a group never spans netns,
// families, addresses or ports).
struct ListenKey {
  uint64_t netns = 0;  // inode of the holders' network namespace
  ListenAddress address;
  auto operator<=>(const ListenKey&) const = default;
};

struct GroupSocket {
  uint64_t inode = 0;
  // The worker whose epoll set holds the socket: the one that accepts on
  // it. 0 when no worker's does (its worker exited) or several do (a
  // listener shared by every worker, as without reuseport).
  int32_t owner_pid = 0;
  // Where the agent duplicates it from: the master's fd when the master
  // holds it (it outlives workers), else the owner's, else another
  // worker's; the lowest fd number of that process.
  int32_t dup_pid = 0;
  int dup_fd = -1;
  // A thread worker server's socket that several of its threads accept on
  // (owner_pid 0): connections to it cannot be steered to one thread.
  bool shared = false;
};

struct ListenGroup {
  ListenKey key;
  std::vector<GroupSocket> sockets;  // by inode
  // A server whose workers are threads: owner_pid is the thread that
  // accepts on the socket, learnt from its accept calls.
  bool thread_workers = false;
  // One socket has nothing to choose between: nginx listens there without
  // `reuseport` (or with a single worker).
  bool reuseport() const { return sockets.size() > 1; }
};

// The instance's TCP listening sockets by group, sorted by key. Only sockets
// a process of the instance holds count (net/tcp lists the whole netns's). A
// process that exits mid-read (ENOENT, ESRCH) drops out quietly; a
// malformed file or line is reported in `errors` as "<path>: <why>" and only
// that part is skipped. Fails when a process cannot be read for lack of
// permission (the agent then cannot steer, and must say why). It costs a
// readlink per open fd of each process (a busy worker's clients included):
// worth repeating when the instance's processes change, not every tick.
absl::StatusOr<std::vector<ListenGroup>> ReadListenGroups(
    const std::string& procfs_root, const NginxInstance& instance,
    std::vector<std::string>* errors);

}  // namespace locus

#endif  // LOCUS_AGENT_HOST_LISTENERS_H_
