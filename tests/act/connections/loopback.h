// Loopback TCP for the connection-steering tests: listeners of one reuseport
// group, and clients pinned to a CPU (on loopback a SYN is handled on the
// connecting CPU, so the client's CPU is the one the program sees).
#ifndef LOCUS_TESTS_ACT_CONNECTIONS_LOOPBACK_H_
#define LOCUS_TESTS_ACT_CONNECTIONS_LOOPBACK_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <thread>
#include <vector>

namespace locus {

inline sockaddr_in LoopbackAddress(uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  return addr;
}

// A socket listening on 127.0.0.1:`port` with SO_REUSEPORT (`port` 0: any;
// `bound`, when given, gets the port it took), or -1. `flags` go to socket(2).
inline int ReuseportListener(uint16_t port, int backlog, int flags = 0,
                             uint16_t* bound = nullptr) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);
  if (fd < 0) return -1;
  int one = 1;
  sockaddr_in addr = LoopbackAddress(port);
  socklen_t len = sizeof(addr);
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0 ||
      bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(fd, backlog) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return -1;
  }
  if (bound != nullptr) *bound = ntohs(addr.sin_port);
  return fd;
}

// Connects `n` clients to 127.0.0.1:`port` from a thread pinned to `cpu`;
// every socket made goes to `fds` (the caller closes them, once the server
// side has accepted). Returns how many were refused (all `n` when the thread
// cannot run on `cpu`).
inline int ConnectPinned(int cpu, uint16_t port, int n, std::vector<int>* fds) {
  int refused = 0;
  std::thread t([&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
      refused = n;
      return;
    }
    sockaddr_in addr = LoopbackAddress(port);
    for (int i = 0; i < n; ++i) {
      int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0 ||
          connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        ++refused;
      }
      if (fd >= 0) fds->push_back(fd);
    }
  });
  t.join();
  return refused;
}

}  // namespace locus

#endif  // LOCUS_TESTS_ACT_CONNECTIONS_LOOPBACK_H_
