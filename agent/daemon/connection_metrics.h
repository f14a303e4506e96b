// Connection steering's part of the stream: per reuseport group, what the
// policy asked (sockets and spill per node) and what the program did.
#ifndef LOCUS_AGENT_DAEMON_CONNECTION_METRICS_H_
#define LOCUS_AGENT_DAEMON_CONNECTION_METRICS_H_

#include <vector>

#include "agent/core/ports.h"
#include "locus/v1/agent.pb.h"
#include "policy/plan.h"

namespace locus {

// One ConnectionGroup per state, in its order; nodes are those of the
// plan's group and those the program counted, ascending.
void AddConnectionGroups(const std::vector<SteeringState>& states,
                         const std::vector<ListenGroupSteering>& plan,
                         v1::Metrics* metrics);

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_CONNECTION_METRICS_H_
