// Finding again, after a crash, the reuseport groups the journal says a
// steering program was attached to: the journal has only each group's key
// (netns + address), so every process of those namespaces is looked at for
// sockets bound there. What `locusd --restore` detaches through.
#ifndef LOCUS_AGENT_ACT_CONNECTIONS_REUSEPORT_RESTORE_H_
#define LOCUS_AGENT_ACT_CONNECTIONS_REUSEPORT_RESTORE_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/act/connections/reuseport_ops.h"
#include "agent/host/listeners.h"

namespace locus {

// Each wanted group that some process still holds, with a (pid, fd) to
// duplicate each of its sockets through; a group no process holds is absent
// (its program went with its sockets).
using FoundGroups = std::map<ListenKey, std::vector<GroupSocket>>;

class ListenerFinder {
 public:
  virtual ~ListenerFinder() = default;
  // A process, fd or file that cannot be read is skipped and reported in
  // `errors` ("<path>: <why>"); fails only when no process can be listed.
  virtual absl::StatusOr<FoundGroups> Find(
      const std::set<ListenKey>& keys, std::vector<std::string>* errors) = 0;
};

// Scans every process under `procfs_root` ("/proc", or a fixture tree):
// ns/net, net/tcp{,6} once per wanted namespace, and fd/ of each process in
// one. It costs a readlink per open fd of those processes: for a restore,
// not for a control loop.
std::unique_ptr<ListenerFinder> MakeProcListenerFinder(
    const std::string& procfs_root);

// What a restore needs to detach steering programs; both borrowed.
struct SteeringRestoreOps {
  ReuseportOps* ops = nullptr;
  ListenerFinder* finder = nullptr;
};

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_CONNECTIONS_REUSEPORT_RESTORE_H_
