#include "agent/api/peer_credentials.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/os_error.h"

namespace locus {

absl::StatusOr<PeerCredentials> ReadPeerCredentials(int fd) {
  struct ucred cred = {};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return LastErrnoStatus("SO_PEERCRED");
  }
  PeerCredentials peer;
  peer.pid = cred.pid;
  peer.uid = cred.uid;
  peer.gid = cred.gid;
  // The kernel says how much room the group list needs (ERANGE) when the
  // first guess is short.
  std::vector<gid_t> groups(32);
  for (int attempt = 0; attempt < 4; ++attempt) {
    socklen_t glen = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &glen) == 0) {
      groups.resize(glen / sizeof(gid_t));
      peer.groups = std::move(groups);
      return peer;
    }
    if (errno != ERANGE) {
      return LastErrnoStatus("SO_PEERGROUPS");
    }
    groups.resize(glen / sizeof(gid_t) + 1);
  }
  return absl::InternalError("SO_PEERGROUPS: group list keeps growing");
}

bool MayMutate(const PeerCredentials& peer, gid_t socket_group) {
  if (peer.uid == 0) return true;
  if (peer.gid == socket_group) return true;
  return std::find(peer.groups.begin(), peer.groups.end(), socket_group) !=
         peer.groups.end();
}

std::string DescribePeer(const PeerCredentials& peer) {
  return absl::StrCat("uid ", peer.uid, " gid ", peer.gid, " pid ", peer.pid);
}

}  // namespace locus
