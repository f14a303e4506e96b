// Listener discovery against this kernel's own /proc formats: listening
// sockets made here, with SO_REUSEPORT and an epoll set, are found in
// /proc/self as a reuseport group, and the (pid, fd) given duplicates the
// very socket through pidfd_getfd.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "agent/host/listeners.h"
#include "common/unique_fd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using ::testing::IsEmpty;

// A socket of `type` bound to `address` (port 0: any); listening when TCP.
UniqueFd Bound(int family, int type, const char* address, uint16_t port,
               bool reuseport) {
  UniqueFd fd(socket(family, type | SOCK_CLOEXEC, 0));
  if (!fd) return fd;
  const int on = 1;
  if (reuseport) setsockopt(fd.get(), SOL_SOCKET, SO_REUSEPORT, &on, 4);
  sockaddr_storage storage{};
  socklen_t length = 0;
  if (family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&storage);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    inet_pton(AF_INET, address, &in->sin_addr);
    length = sizeof(*in);
  } else {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    inet_pton(AF_INET6, address, &in6->sin6_addr);
    length = sizeof(*in6);
  }
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&storage), length) != 0 ||
      (type == SOCK_STREAM && listen(fd.get(), 16) != 0)) {
    fd.reset();
  }
  return fd;
}

uint16_t PortOf(int fd) {
  sockaddr_storage storage{};
  socklen_t length = sizeof(storage);
  getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &length);
  return ntohs(reinterpret_cast<sockaddr_in*>(&storage)->sin_port);
}

uint64_t InodeOf(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 ? st.st_ino : 0;
}

uint64_t CookieOf(int fd) {
  uint64_t cookie = 0;
  socklen_t length = sizeof(cookie);
  getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &length);
  return cookie;
}

const ListenGroup* Find(const std::vector<ListenGroup>& groups, int family,
                        uint16_t port) {
  for (const ListenGroup& group : groups) {
    if (group.key.address.family == family && group.key.address.port == port)
      return &group;
  }
  return nullptr;
}

TEST(ListenersPrivilegedTest, FindsThisProcessReuseportGroupInProc) {
  UniqueFd first = Bound(AF_INET, SOCK_STREAM, "127.0.0.1", 0, true);
  ASSERT_TRUE(first) << std::strerror(errno);
  const uint16_t port = PortOf(first.get());
  UniqueFd second = Bound(AF_INET, SOCK_STREAM, "127.0.0.1", port, true);
  ASSERT_TRUE(second) << std::strerror(errno);
  UniqueFd udp = Bound(AF_INET, SOCK_DGRAM, "127.0.0.1", port, true);
  ASSERT_TRUE(udp) << std::strerror(errno);
  UniqueFd single = Bound(AF_INET, SOCK_STREAM, "127.0.0.1", 0, false);
  ASSERT_TRUE(single) << std::strerror(errno);
  // IPv6, where this kernel has it.
  UniqueFd six = Bound(AF_INET6, SOCK_STREAM, "::1", 0, true);
  UniqueFd six_too;
  if (six)
    six_too = Bound(AF_INET6, SOCK_STREAM, "::1", PortOf(six.get()), true);
  // The first one is "a worker's": in its epoll set.
  UniqueFd epoll(epoll_create1(EPOLL_CLOEXEC));
  ASSERT_TRUE(epoll);
  epoll_event event{};
  event.events = EPOLLIN;
  ASSERT_EQ(epoll_ctl(epoll.get(), EPOLL_CTL_ADD, first.get(), &event), 0);

  const int32_t pid = getpid();
  std::vector<std::string> errors;
  auto groups = ReadListenGroups("/proc", {pid, {pid}}, &errors);
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_THAT(errors, IsEmpty());

  const ListenGroup* group = Find(*groups, AF_INET, port);
  ASSERT_NE(group, nullptr) << "127.0.0.1:" << port;
  EXPECT_EQ(ListenAddressString(group->key.address),
            "127.0.0.1:" + std::to_string(port));
  struct stat ns {};
  ASSERT_EQ(stat("/proc/self/ns/net", &ns), 0);
  EXPECT_EQ(group->key.netns, ns.st_ino);
  ASSERT_TRUE(group->reuseport());
  ASSERT_EQ(group->sockets.size(), 2u) << "the UDP socket is not in it";
  const bool first_is_0 = group->sockets[0].inode == InodeOf(first.get());
  const GroupSocket& polled = group->sockets[first_is_0 ? 0 : 1];
  const GroupSocket& other = group->sockets[first_is_0 ? 1 : 0];
  EXPECT_EQ(polled.inode, InodeOf(first.get()));
  EXPECT_EQ(other.inode, InodeOf(second.get()));
  EXPECT_EQ(polled.owner_pid, pid);
  EXPECT_EQ(other.owner_pid, 0);
  EXPECT_EQ(polled.dup_pid, pid);
  EXPECT_EQ(polled.dup_fd, first.get());
  EXPECT_EQ(other.dup_fd, second.get());

  // The (pid, fd) given reaches the very socket.
  // Debian 12's <sys/pidfd.h> lacks extern "C": the raw system calls.
  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  ASSERT_TRUE(pidfd) << std::strerror(errno);
  UniqueFd copy(
      static_cast<int>(syscall(SYS_pidfd_getfd, pidfd.get(), other.dup_fd, 0)));
  ASSERT_TRUE(copy) << std::strerror(errno);
  EXPECT_EQ(CookieOf(copy.get()), CookieOf(second.get()));

  const ListenGroup* alone = Find(*groups, AF_INET, PortOf(single.get()));
  ASSERT_NE(alone, nullptr);
  EXPECT_FALSE(alone->reuseport());
  EXPECT_EQ(alone->sockets[0].inode, InodeOf(single.get()));

  if (!six_too) return;  // no IPv6 on this kernel's loopback
  const ListenGroup* v6 = Find(*groups, AF_INET6, PortOf(six.get()));
  ASSERT_NE(v6, nullptr);
  EXPECT_EQ(ListenAddressString(v6->key.address),
            "[::1]:" + std::to_string(PortOf(six.get())));
  EXPECT_EQ(v6->sockets.size(), 2u);
}

// As a user without the right to inspect another's process (as the agent
// would be without CAP_SYS_PTRACE), the read fails, saying why, rather than
// finding no listeners.
TEST(ListenersPrivilegedTest, WithoutTheRightToInspectTheReadFails) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (to become nobody)";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
    std::vector<std::string> errors;
    auto groups = ReadListenGroups("/proc", {1, {1}}, &errors);
    _exit(absl::IsPermissionDenied(groups.status()) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: could not become nobody";
}

}  // namespace
}  // namespace locus
