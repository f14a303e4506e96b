// Which thread accepts on which listening socket, for servers whose workers
// are threads: HAProxy's `bind ... shards by-thread` gives each thread its
// own SO_REUSEPORT socket, and connection steering must know which thread
// a socket's connections go to. Nothing in /proc says it (the threads share
// one fd table and every epoll set), so it is learnt from the kernel: each
// accept/accept4 call of a watched process records (listening socket's
// inode, calling thread). bpf/accepts.bpf.c; see accept_owners_bpf.h for
// the factory.
#ifndef LOCUS_AGENT_SENSORS_ACCEPT_OWNERS_H_
#define LOCUS_AGENT_SENSORS_ACCEPT_OWNERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace locus {

// Who called accept on one listening socket since its entry was last
// forgotten.
struct AcceptOwner {
  int32_t process = 0;  // tgid of the caller
  int32_t tid = 0;      // the thread that called last
  // Another thread called accept on it too: it is shared (HAProxy's
  // `shards 1`, or a bind whose threads take turns).
  bool shared = false;

  friend bool operator==(const AcceptOwner& a, const AcceptOwner& b) {
    return a.process == b.process && a.tid == b.tid && a.shared == b.shared;
  }
};

class AcceptOwners {
 public:
  virtual ~AcceptOwners() = default;
  // Records the accept calls of exactly these processes (tgids) from now
  // on; the entries of a process dropped are forgotten. An empty set
  // detaches the program (no cost on the host's syscalls).
  virtual absl::Status Watch(const std::vector<int32_t>& processes) = 0;
  // Listening socket inode -> who accepted on it.
  virtual absl::StatusOr<absl::flat_hash_map<uint64_t, AcceptOwner>> Read() = 0;
  // Forgets these sockets: their next accept call starts them afresh (the
  // thread that owned one exited, or a shared one may no longer be).
  virtual void Forget(const std::vector<uint64_t>& inodes) = 0;
  // Where it learns from, or why it cannot ("bpf unavailable: ...").
  virtual std::string source() const = 0;
};

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_ACCEPT_OWNERS_H_
