// A listening TCP socket on 127.0.0.1 for the privileged tests that watch
// what the kernel sees of accepts and sends, and a client connection to it.
#ifndef LOCUS_TESTS_COMMON_LOOPBACK_LISTENER_H_
#define LOCUS_TESTS_COMMON_LOOPBACK_LISTENER_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <cstdint>

#include "common/unique_fd.h"
#include "gtest/gtest.h"

namespace locus {

struct LoopbackListener {
  UniqueFd fd;
  sockaddr_in addr{};  // the port the kernel chose
  uint64_t inode = 0;  // as /proc/net/tcp and fstat(2) give it
};

// `accept_timeout_s` > 0: a blocking accept gives up after that long
// (EAGAIN), so that a test whose connection never comes ends instead of
// hanging.
inline LoopbackListener ListenOnLoopback(int accept_timeout_s = 0) {
  LoopbackListener l;
  l.fd = UniqueFd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (accept_timeout_s > 0) {
    timeval timeout = {accept_timeout_s, 0};
    EXPECT_EQ(setsockopt(l.fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout,
                         sizeof(timeout)),
              0);
  }
  l.addr.sin_family = AF_INET;
  l.addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(l.addr);
  EXPECT_EQ(bind(l.fd.get(), reinterpret_cast<sockaddr*>(&l.addr), len), 0);
  EXPECT_EQ(listen(l.fd.get(), 16), 0);
  EXPECT_EQ(getsockname(l.fd.get(), reinterpret_cast<sockaddr*>(&l.addr), &len),
            0);
  struct stat st = {};
  EXPECT_EQ(fstat(l.fd.get(), &st), 0);
  l.inode = st.st_ino;
  return l;
}

inline UniqueFd ConnectTo(const LoopbackListener& l) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  EXPECT_EQ(connect(fd.get(), reinterpret_cast<const sockaddr*>(&l.addr),
                    sizeof(l.addr)),
            0);
  return fd;
}

}  // namespace locus

#endif  // LOCUS_TESTS_COMMON_LOOPBACK_LISTENER_H_
