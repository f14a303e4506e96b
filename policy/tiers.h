// Memory tiers as Locus sees them: the nodes whose memory is slower than
// that of the nodes with CPUs. Their pages are the kernel's (demotion,
// tiering promotion) or DAMON's to manage: a worker's locality is judged
// over the other nodes, and Locus never moves a page off a lower tier.
#ifndef LOCUS_POLICY_TIERS_H_
#define LOCUS_POLICY_TIERS_H_

#include <string>
#include <vector>

#include "policy/snapshot.h"

namespace locus {

// The tier of the fastest node with CPUs (where homes are): the top tier.
// -1 where the kernel lists no tiers.
int TopTier(const Topology& topology);

// Per node index of `topology.nodes`: 1 for a node below the nodes with
// CPUs, where Locus leaves the pages: any node without CPUs on a host that
// has nodes with CPUs, whatever tier the kernel lists it in (a lower one,
// where the kernel demotes to and promotes from; or the DRAM tier, where
// kernels before 6.7 put even a node HMAT calls slower: 6.1 lists a
// CXL-like node in memory_tier4 with the CPU nodes). Nothing runs there to
// want its pages near, so whoever put them there (the kernel's demotion, a
// memory binding, an expander's driver) meant to. A node with CPUs is never
// lower: it may be a home.
std::vector<char> LowerTierNodes(const Topology& topology);

// The ids of LowerTierNodes()' nodes, ascending as the nodes are.
std::vector<int> LowerTierIds(const Topology& topology);

// "tier 4" for a node of a known tier, "no tier" otherwise; with " (lower)"
// for a lower tier's node (`lower` from LowerTierNodes).
std::string TierName(const Node& node, bool lower);

}  // namespace locus

#endif  // LOCUS_POLICY_TIERS_H_
