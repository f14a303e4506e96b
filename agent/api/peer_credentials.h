// Who is on the other end of a Unix socket connection, and whether they may
// make mutating calls. gRPC 1.51 reports a Unix-socket peer only as "unix:"
// (or "fd:N" for a handed-over fd), so the server accepts connections itself
// and asks the kernel (SO_PEERCRED, SO_PEERGROUPS) before handing the fd on.
#ifndef LOCUS_AGENT_API_PEER_CREDENTIALS_H_
#define LOCUS_AGENT_API_PEER_CREDENTIALS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace locus {

struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
  std::vector<gid_t> groups;  // supplementary groups
};

// Reads the credentials the peer of connected Unix socket `fd` had when it
// connected (SO_PEERCRED) and its supplementary groups (SO_PEERGROUPS).
absl::StatusOr<PeerCredentials> ReadPeerCredentials(int fd);

// Root, or a member (primary or supplementary) of `socket_group`.
bool MayMutate(const PeerCredentials& peer, gid_t socket_group);

// "uid 65534 gid 65534 pid 123" for logs.
std::string DescribePeer(const PeerCredentials& peer);

}  // namespace locus

#endif  // LOCUS_AGENT_API_PEER_CREDENTIALS_H_
