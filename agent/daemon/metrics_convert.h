// One tick's report as the locus.v1.Metrics message the stream carries.
#ifndef LOCUS_AGENT_DAEMON_METRICS_CONVERT_H_
#define LOCUS_AGENT_DAEMON_METRICS_CONVERT_H_

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

// Pieces shared with GetStatus and Explain.
v1::AgentMode ToAgentMode(Mode mode);
v1::PolicyState ToPolicyState(const PolicyState& state);
std::vector<v1::SensorSource> ToSensorSources(
    const SnapshotCollector::SensorState& sensors);
v1::Action ToAction(const Action& action, uint64_t tick,
                    const ActionResult* result);

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_METRICS_CONVERT_H_
