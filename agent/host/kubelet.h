// Containers the kubelet places itself, so that Locus never fights it: the
// static CPU manager gives a Guaranteed container exclusive CPUs (and the
// Topology Manager's single-numa-node keeps them, and its memory, on one
// node); moving such a container's threads or pages undoes the kubelet's
// choice. Read from the kubelet's own state files through a root directory
// (/var/lib/kubelet on a node, a fixture in tests).
#ifndef LOCUS_AGENT_HOST_KUBELET_H_
#define LOCUS_AGENT_HOST_KUBELET_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "policy/snapshot.h"

namespace locus {

// The pod UID a kubepods cgroup path names, dashed as in the kubelet's
// state ("/kubepods/pod1a2b-.../<container>" with the cgroupfs driver,
// ".../kubepods-burstable-pod1a2b_....slice/cri-containerd-<id>.scope"
// with the systemd driver); "" when the path is not a pod's.
std::string PodUidOfCgroup(absl::string_view cgroup_path);

class KubeletWatch {
 public:
  explicit KubeletWatch(std::string kubelet_root)
      : root_(std::move(kubelet_root)) {}

  // Sets placed_by on each target in a kubepods cgroup whose cpuset is one
  // the static CPU manager gave its pod exclusively
  // (<root>/cpu_manager_state). The state is read afresh at each call when
  // some target is in a pod; a missing state file means no CPU manager
  // (quietly), a malformed one is reported in `errors` and places nothing.
  void Fill(std::vector<Target>& targets, std::vector<std::string>* errors);

 private:
  std::string root_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_HOST_KUBELET_H_
