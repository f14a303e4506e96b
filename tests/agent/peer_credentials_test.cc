#include "agent/api/peer_credentials.h"

#include <sys/socket.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace locus {
namespace {

TEST(PeerCredentials, ReadsTheKernelsViewOfTheOtherEnd) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  auto peer = ReadPeerCredentials(fds[0]);
  close(fds[0]);
  close(fds[1]);
  ASSERT_TRUE(peer.ok()) << peer.status();
  EXPECT_EQ(peer->pid, getpid());
  EXPECT_EQ(peer->uid, geteuid());
  EXPECT_EQ(peer->gid, getegid());
  std::vector<gid_t> groups(getgroups(0, nullptr));
  getgroups(static_cast<int>(groups.size()), groups.data());
  EXPECT_EQ(peer->groups.size(), groups.size());
}

TEST(PeerCredentials, FailsOnANonSocket) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  EXPECT_FALSE(ReadPeerCredentials(fds[0]).ok());
  close(fds[0]);
  close(fds[1]);
}

TEST(MayMutate, RootOrTheSocketsGroupOnly) {
  constexpr gid_t kLocus = 990;
  PeerCredentials root{.pid = 1, .uid = 0, .gid = 0, .groups = {}};
  PeerCredentials primary{.pid = 2, .uid = 1000, .gid = kLocus, .groups = {}};
  PeerCredentials supplementary{
      .pid = 3, .uid = 1000, .gid = 1000, .groups = {27, kLocus}};
  PeerCredentials other{.pid = 4, .uid = 65534, .gid = 65534, .groups = {27}};
  EXPECT_TRUE(MayMutate(root, kLocus));
  EXPECT_TRUE(MayMutate(primary, kLocus));
  EXPECT_TRUE(MayMutate(supplementary, kLocus));
  EXPECT_FALSE(MayMutate(other, kLocus));
  // With no locus group the socket's group is root's.
  EXPECT_FALSE(MayMutate(supplementary, 0));
  EXPECT_TRUE(
      MayMutate(PeerCredentials{.uid = 1000, .gid = 5, .groups = {0}}, 0));
}

}  // namespace
}  // namespace locus
