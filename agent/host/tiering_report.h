// The host's memory tiers and their movers as the wire type (Metrics,
// AgentStatus, ProbeReport share it) and as the sentences locusctl status,
// locusd --probe and the doctor print: which nodes are in which tier, and
// who moves pages between them. Locus itself leaves a lower tier's pages to
// the kernel and DAMON (policy/tiers.h), which is what the sentences say.
#ifndef LOCUS_AGENT_HOST_TIERING_REPORT_H_
#define LOCUS_AGENT_HOST_TIERING_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "locus/v1/agent.pb.h"
#include "policy/snapshot.h"

namespace locus {

// Pure: each node with its tier and whether it is a lower one, and the
// movers as read this tick (`numa_balancing_mode` as in Snapshot).
v1::MemoryTiering MemoryTieringReport(const Topology& topology,
                                      const MemoryTiering& tiering,
                                      int numa_balancing_mode);

// Copies each node's tier from metrics->memory_tiering() into
// metrics->nodes() (the same nodes in the same order, both from the
// snapshot's topology).
void SetNodeTiers(v1::Metrics* metrics);

// The same read from the host now, for the one-shot paths (locusd --probe,
// the doctor). Fails when the topology cannot be read at all; bad files are
// in `errors` as ReadTopology and ReadMemoryTiering say.
absl::StatusOr<v1::MemoryTiering> ReadMemoryTieringReport(
    absl::string_view sysfs_root, absl::string_view procfs_root,
    std::vector<std::string>* errors);

// Whether any node is of a lower tier than the nodes with CPUs.
bool HasLowerTier(const v1::MemoryTiering& tiering);

// "tier 4: nodes 0-1 (4 CPUs); tier 6: node 2 (no CPUs)"; nodes the kernel
// put in no tier come last as "no tier: ...". Empty without nodes.
std::string TierSummary(const v1::MemoryTiering& tiering);

// One sentence per lower-tier node naming who moves its pages, e.g. "node
// 2: tier 6 (lower, no CPUs): the kernel demotes to it (demotion on) and
// promotes from it (numa_balancing=2); Locus leaves its pages"; then one per
// DAMON migrate scheme ("DAMON kdamond 0 scheme 1: migrate_cold to node
// 2"), and what the kernel moved since boot where it counts it. Text from
// the host is made printable.
std::vector<std::string> TierMoverLines(const v1::MemoryTiering& tiering);

// How the kernel's own movers are set, whatever the tiers: "demotion on;
// tiering promotion on (numa_balancing=2); DAMON: no migrate scheme".
std::string MoverSettings(const v1::MemoryTiering& tiering);

}  // namespace locus

#endif  // LOCUS_AGENT_HOST_TIERING_REPORT_H_
