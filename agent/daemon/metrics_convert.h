// The one converter from the agent's types to the wire types: one tick's
// Snapshot, Plan and outcomes as the locus.v1.Metrics message the stream
// carries, and the pieces of it that GetStatus shares. Text from outside the
// agent (process and IRQ names, policy errors, kernel messages) is made valid
// UTF-8 on the way in: one bad byte in a proto3 string makes the whole
// message unreadable to clients.
#ifndef LOCUS_AGENT_DAEMON_METRICS_CONVERT_H_
#define LOCUS_AGENT_DAEMON_METRICS_CONVERT_H_

#include <cstdint>

#include "absl/time/time.h"
#include "agent/core/loop.h"
#include "agent/daemon/snapshot_collector.h"
#include "locus/v1/agent.pb.h"

namespace locus {

struct MetricsContext {
  absl::Duration period = absl::Seconds(1);
  absl::Time wall_time;  // when the tick ran
  SnapshotCollector::SensorState sensors;
};

v1::Metrics ToMetrics(const TickReport& report, const MetricsContext& context);

// The part of ToMetrics a snapshot alone knows: tick, time (from
// `wall_time_ns`, Unix epoch), tick period, nodes (CPU busy from the CPU
// samples; hinting faults summed over target threads per memory node), tasks
// (one per target thread) and IRQs. Leaves pages_migrated, hold-downs, mode,
// actions and everything else to the caller.
void FillMetricsFromSnapshot(const Snapshot& snapshot, uint64_t tick,
                             int64_t wall_time_ns, v1::Metrics* metrics);

// One action as reported in Metrics.actions and Explain; with `result`, also
// its outcome, the bytes it moved and, unless it applied, the error.
v1::Action ToAction(const Action& action, uint64_t tick,
                    const ActionResult* result = nullptr);

v1::AgentMode ToAgentMode(Mode mode);

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_METRICS_CONVERT_H_
