// Discovery of the targets' reuseport groups for connection steering, on
// the host scan's thread: which listening sockets each server instance has
// and which worker accepts on each (agent/host/listeners.h). It costs a
// readlink per open fd of every process of an instance, so it is repeated
// only when the workers change (start, reload, exit) and every few scans.
// Where the workers are threads of one process (HAProxy), which thread
// accepts on which socket is learnt from their accept calls
// (agent/sensors/accept_owners.h), read every scan.
#ifndef LOCUS_AGENT_DAEMON_LISTENER_SCAN_H_
#define LOCUS_AGENT_DAEMON_LISTENER_SCAN_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "agent/host/listeners.h"
#include "agent/sensors/accept_owners.h"
#include "policy/snapshot.h"

namespace locus {

// What the policy sees of a group.
ListenGroupSample SampleOf(const ListenGroup& group);

class ListenerScan {
 public:
  // `rescan_every`: scans between two discoveries when the workers stay.
  // `accepts` (may be null) tells which thread accepts on a thread worker
  // server's socket; without it their sockets have no owner.
  ListenerScan(std::string procfs_root, int rescan_every,
               AcceptOwners* accepts = nullptr)
      : procfs_root_(std::move(procfs_root)),
        rescan_every_(rescan_every),
        accepts_(accepts) {}

  // Discovers again when the targets' workers changed or the last discovery
  // is `rescan_every` scans old. A file that cannot be read is reported in
  // `errors` ("connections: ..."); what could be read still counts.
  void Refresh(const std::vector<Target>& targets,
               std::vector<std::string>* errors);

  const std::vector<ListenGroup>& groups() const { return groups_; }

 private:
  // The workers' instances, by master: each worker's parent.
  std::vector<NginxInstance> Instances(std::vector<std::string>* errors) const;
  // Per instance, its thread worker process seen last (newest_).
  void FindNewest();
  // Reads every instance's groups afresh.
  void Discover(std::vector<std::string>* errors);
  // Watches the accept calls of the thread workers' processes.
  void WatchAccepts(std::vector<std::string>* errors);
  // Sets the owner of each thread worker server's socket: the thread that
  // accepts on it, when it is one of `threads`, the only one, and of its
  // instance's newest process.
  void OwnThreadSockets(const std::set<int32_t>& threads,
                        std::vector<std::string>* errors);

  const std::string procfs_root_;
  const int rescan_every_;
  AcceptOwners* const accepts_;
  std::set<int32_t> workers_;  // at the last discovery
  // Thread workers' processes -> their instance (master, or itself).
  std::map<int32_t, int32_t> thread_processes_;
  // Per instance, its newest thread worker process: a reload's new one
  // takes over the sockets, and what its old one accepted no longer says
  // which thread will.
  std::map<int32_t, int32_t> newest_;
  std::map<int32_t, uint64_t> seen_;  // process -> when first seen
  uint64_t seen_count_ = 0;
  std::set<int32_t> accepts_watched_;
  int scans_since_ = 0;
  bool scanned_ = false;
  std::vector<ListenGroup> groups_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_LISTENER_SCAN_H_
