// Discovery of the targets' reuseport groups for connection steering, on
// the host scan's thread: which listening sockets each nginx instance has
// and which worker accepts on each (agent/host/listeners.h). It costs a
// readlink per open fd of every process of an instance, so it is repeated
// only when the workers change (start, reload, exit) and every few scans.
#ifndef LOCUS_AGENT_DAEMON_LISTENER_SCAN_H_
#define LOCUS_AGENT_DAEMON_LISTENER_SCAN_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "agent/host/listeners.h"
#include "policy/snapshot.h"

namespace locus {

// What the policy sees of a group.
ListenGroupSample SampleOf(const ListenGroup& group);

class ListenerScan {
 public:
  // `rescan_every`: scans between two discoveries when the workers stay.
  ListenerScan(std::string procfs_root, int rescan_every)
      : procfs_root_(std::move(procfs_root)), rescan_every_(rescan_every) {}

  // Discovers again when the targets' workers changed or the last discovery
  // is `rescan_every` scans old. A file that cannot be read is reported in
  // `errors` ("connections: ..."); what could be read still counts.
  void Refresh(const std::vector<Target>& targets,
               std::vector<std::string>* errors);

  const std::vector<ListenGroup>& groups() const { return groups_; }

 private:
  // The workers' instances, by master: each worker's parent.
  std::vector<NginxInstance> Instances(std::vector<std::string>* errors) const;

  const std::string procfs_root_;
  const int rescan_every_;
  std::set<int32_t> workers_;  // at the last discovery
  int scans_since_ = 0;
  bool scanned_ = false;
  std::vector<ListenGroup> groups_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_LISTENER_SCAN_H_
