// Memory tiers as Locus sees them: the nodes below the nodes with CPUs.
// Their pages are the kernel's (demotion, tiering promotion), DAMON's or a
// binding's to manage: a worker's locality is judged over the other nodes,
// and Locus never moves a page off one of them.
#ifndef LOCUS_POLICY_TIERS_H_
#define LOCUS_POLICY_TIERS_H_

#include <vector>

#include "policy/snapshot.h"

namespace locus {

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

}  // namespace locus

#endif  // LOCUS_POLICY_TIERS_H_
