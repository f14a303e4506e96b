// The "memory tiers" block of locusctl status and locusd --probe: the tiers
// and their nodes, then who moves pages between them (agent/host/
// tiering_report.h says the sentences).
#ifndef LOCUS_AGENT_CTL_TIERS_FORMAT_H_
#define LOCUS_AGENT_CTL_TIERS_FORMAT_H_

#include <string>

#include "locus/v1/agent.pb.h"

namespace locus {
namespace ctl {

// For status: empty unless a node is of a lower tier, so that an ordinary
// host's status reads as before.
std::string TiersForStatus(const v1::MemoryTiering& tiering);

// For status, after the tiers: each worker's memory by node, the lower
// tier's told apart; empty where TiersForStatus is.
std::string WorkerMemoryForStatus(
    const v1::MemoryTiering& tiering,
    const google::protobuf::RepeatedPtrField<v1::WorkerMemory>& workers);

// For the probe: always (when the report has nodes at all), with how the
// kernel's movers are set even on a host without tiers.
std::string TiersForProbe(const v1::MemoryTiering& tiering);

}  // namespace ctl
}  // namespace locus

#endif  // LOCUS_AGENT_CTL_TIERS_FORMAT_H_
