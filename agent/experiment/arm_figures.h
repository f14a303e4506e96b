// What users feel, per arm of the experiment, beside the work per
// CPU-second: requests' service times (p50, p99), run-queue wait, context
// switches and bytes per request, and the whole host's throughput and CPU
// busy; and the latency guardrail that stops a treatment that makes
// requests wait. Work per CPU-second cannot see waiting: a worker confined
// to a busy node does the same work per CPU-second while its requests queue.
#ifndef LOCUS_AGENT_EXPERIMENT_ARM_FIGURES_H_
#define LOCUS_AGENT_EXPERIMENT_ARM_FIGURES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/experiment/units.h"
#include "locus/v1/agent.pb.h"
#include "policy/snapshot.h"

namespace locus {

// The arms' bytes per request (per connection where requests are not
// seen) differ by more than this share: their traffic is not alike.
inline constexpr double kTrafficDiffers = 0.10;

// The sums (units.h) over the units of `arm` (every unit: nullopt) with a
// counted interval.
ArmSums SumArm(const RunningExperiment& run,
               std::optional<experiment::Arm> arm);
void AddSums(ArmSums& into, const ArmSums& add);
// What grew from `then` to `now` (sums of the same units, later).
ArmSums Since(const ArmSums& now, const ArmSums& then);
// Per request (p50, p99, wait, switches, bytes) and per connection.
v1::ExperimentArmFigures Figures(const ArmSums& sums);

// A tick of a run past its pre-period: its treated arm's ticks confined
// and widened (CountWidened, units.h), and the host's CPUs' busy time
// (/proc/stat's, softirq included; CPUs not read this tick left out).
void CountTick(RunningExperiment& run, const Snapshot& snapshot);

// Each arm's figures and the latency estimates over the intervals so far
// into `run` (after each interval, not each tick: the report of every tick
// copies them): p50 and p99 service time (a bootstrap over workers, drawn
// from the run's seed) and run-queue wait per CPU-second (the ratio of
// totals; with `live`, read with its confidence sequence as the work
// estimate is).
void EstimateLatency(RunningExperiment& run, bool live);

// The per-arm figures, the host's, the traffic flag and the latency
// estimates into `report`.
void AddArmFigures(const RunningExperiment& run, v1::ExperimentReport& report);

// Where each arm's new connections arrived, by the node of the CPU that
// received them (connection steering's count): a note of the report, "not
// counted" while no group was steered. Arms fed from different nodes
// serve different paths (IRQs, memory), whatever the policy does.
std::string SourcesNote(const RunningExperiment& run);

// One look of the latency guardrail at the run's latency estimates with
// the efficiency guardrail's boundary `bound_z`: the treated arm's p99
// service time or run-queue wait significantly above (1 + margin) times
// the control's. Sets run.latency_guardrail_p (the smaller p); returns
// what crossed ("p99 service time +31.0 % ..."), or empty.
std::string LookForLatencyHarm(RunningExperiment& run, double bound_z);

}  // namespace locus

#endif  // LOCUS_AGENT_EXPERIMENT_ARM_FIGURES_H_
