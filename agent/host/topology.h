// NUMA topology from sysfs: nodes, their online CPUs, memory and distances.
#ifndef LOCUS_AGENT_HOST_TOPOLOGY_H_
#define LOCUS_AGENT_HOST_TOPOLOGY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policy/snapshot.h"

namespace locus {

// Reads <sysfs_root>/devices/system/node/node*/{cpulist,meminfo,distance},
// <sysfs_root>/devices/system/cpu/online and each node's memory tier from
// <sysfs_root>/devices/virtual/memory_tiering/memory_tierN/nodelist
// (sysfs_root is "/sys" on a host, a fixture directory in tests). Without
// memory_tiering every Node::tier is -1.
//
// Only online CPUs are listed in a node; a node with no online CPU (a
// memory-only node, e.g. CXL or a node whose CPUs are all offline) has an
// empty cpu list. Topology::cpu_node covers every CPU seen in any node's
// cpulist, cpu/online or cpu/present, with -1 for offline or unplaced CPUs.
//
// Fails only when no node can be read at all (no node directory). A bad file
// of one node (malformed or truncated cpulist, meminfo, distance or a
// tier's nodelist) is reported in `errors` as "<path>: <why>" and that part
// of the node is left at a safe default (no CPUs / zero memory / 10 local
// and 20 remote / tier -1), so the rest of the model still loads. When
// `errors` is null they are logged.
absl::StatusOr<Topology> ReadTopology(absl::string_view sysfs_root,
                                      std::vector<std::string>* errors);
absl::StatusOr<Topology> ReadTopology(absl::string_view sysfs_root);

// Node id of a CPU, -1 when offline or unknown.
int NodeOfCpu(const Topology& topology, int cpu);

// Index of a node id in Topology::nodes, -1 when absent.
int NodeIndex(const Topology& topology, int node_id);

}  // namespace locus

#endif  // LOCUS_AGENT_HOST_TOPOLOGY_H_
