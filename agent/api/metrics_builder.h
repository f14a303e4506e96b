// Turns one tick's Snapshot and Plan into the Metrics message the hub
// publishes, so the control loop only adds what a snapshot cannot know
// (outcomes, reverts, policy state, sensor sources, counters).
#ifndef LOCUS_AGENT_API_METRICS_BUILDER_H_
#define LOCUS_AGENT_API_METRICS_BUILDER_H_

#include <cstdint>

#include "locus/v1/agent.pb.h"
#include "policy/plan.h"
#include "policy/snapshot.h"

namespace locus {

// Sets tick, time (from `wall_time_ns`, Unix epoch), tick period, nodes (CPU
// busy from the CPU samples; hinting faults summed over target threads per
// memory node), tasks (one per target thread) and IRQs. Leaves
// pages_migrated, mode, actions and everything else to the caller.
void FillMetricsFromSnapshot(const Snapshot& snapshot, uint64_t tick,
                             int64_t wall_time_ns, v1::Metrics* metrics);

// One planned action as reported in Metrics.actions and Explain.
v1::Action ToProtoAction(const Action& action, uint64_t tick);

v1::TaskRole ToProtoRole(TargetRole role);

}  // namespace locus

#endif  // LOCUS_AGENT_API_METRICS_BUILDER_H_
