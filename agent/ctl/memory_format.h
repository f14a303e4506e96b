// A worker's resident memory as locusctl shows it: per node, the nodes of
// a lower memory tier told apart (status, explain), and as two figures for
// top's columns: the share of its top-tier memory on its home node (what
// Locus judges a worker's locality by) and what lies on the lower tier
// (what it leaves to the kernel: policy/tiers.h).
#ifndef LOCUS_AGENT_CTL_MEMORY_FORMAT_H_
#define LOCUS_AGENT_CTL_MEMORY_FORMAT_H_

#include <cstdint>
#include <string>

#include "locus/v1/agent.pb.h"

namespace locus {
namespace ctl {

using NodeBytes = google::protobuf::RepeatedField<uint64_t>;

// "2.4 GiB", "512 B": one decimal from KiB on.
std::string FormatBytes(double bytes);

// "node 0 40.0 MiB (home), node 1 2.0 MiB; lower tier: node 2 38.0 MiB",
// `bytes` indexed like tiering.nodes; "none" when every figure is 0 (or
// none was read).
std::string MemoryByNode(const NodeBytes& bytes,
                         const v1::MemoryTiering& tiering, int home_node);

// Bytes on the home node over bytes on every node not of a lower tier;
// -1 without a home or without such memory.
double TopTierAtHome(const NodeBytes& bytes, const v1::MemoryTiering& tiering,
                     int home_node);

// Bytes on the nodes of a lower tier.
uint64_t LowerTierBytes(const NodeBytes& bytes,
                        const v1::MemoryTiering& tiering);

}  // namespace ctl
}  // namespace locus

#endif  // LOCUS_AGENT_CTL_MEMORY_FORMAT_H_
