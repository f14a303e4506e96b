// The running experiment's state: its units (the workers randomised into
// arms), what each did interval by interval, and the arms' series. The
// runner (runner.h) owns one while an experiment runs; these functions keep
// it, without a clock or a lock of their own.
#ifndef LOCUS_AGENT_EXPERIMENT_UNITS_H_
#define LOCUS_AGENT_EXPERIMENT_UNITS_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "agent/sensors/work_counter.h"
#include "locus/v1/agent.pb.h"
#include "policy/experiment_arms.h"
#include "policy/experiment_assign.h"
#include "policy/experiment_sequential.h"
#include "policy/experiment_stats.h"
#include "policy/snapshot.h"

namespace locus {

// "treated" or "control".
inline const char* ArmWord(experiment::Arm arm) {
  return arm == experiment::Arm::kTreated ? "treated" : "control";
}

struct Unit {
  int32_t pid = 0;
  std::string comm;
  experiment::Arm arm = experiment::Arm::kControl;
  int node = -1;           // stratum: where it ran when it joined
  int32_t instance = 0;    // its master's pid
  bool active = true;      // false once it exited
  uint32_t joined_at = 0;  // interval count when it joined
  bool confined = false;   // treated and seen on one node (pinned home)
  uint32_t lost_at = 0;    // interval count when it was found gone
  // Cumulative counts at the last read; `baseline` false until one.
  WorkSample last;
  bool baseline = false;
  // Sums over its intervals.
  uint64_t bytes = 0;
  uint64_t accepted = 0;
  uint64_t cpu_ns = 0;
  uint64_t wait_ns = 0;  // run-queue wait
  uint64_t voluntary_switches = 0;
  uint64_t involuntary_switches = 0;
  uint64_t requests = 0;
  std::vector<uint64_t> service_us;  // per bucket (WorkSample's)
  uint32_t intervals = 0;
  // Its intervals left out after its arm was set (the burn-in).
  uint32_t burned = 0;
  // Sums over the pre-period, before the arms differ.
  uint64_t pre_bytes = 0;
  uint64_t pre_accepted = 0;
  uint64_t pre_cpu_ns = 0;
  // Running mean and sum of squares (Welford), over its intervals with
  // both, of its log(bytes per CPU-second) less all workers' mean in that
  // interval.
  uint32_t logs = 0;
  double log_mean = 0;
  double log_m2 = 0;
};

// The sums of a set of units' counted intervals.
struct ArmSums {
  double bytes = 0, cpu_ns = 0, wait_ns = 0, voluntary = 0, involuntary = 0;
  uint64_t requests = 0, accepted = 0;
  std::vector<uint64_t> service_us;  // per bucket
};

struct RunningExperiment {
  v1::ExperimentReport header;  // id, aa, seed, started, duration, interval
  std::vector<Unit> units;
  uint64_t start_ns = 0;  // monotonic, the snapshot's clock
  uint64_t interval_ns = 0;
  uint64_t next_ns = 0;  // end of the interval under way
  uint64_t end_ns = 0;
  uint64_t now_ns = 0;     // the last tick's
  uint32_t planned = 0;    // intervals in the whole duration
  uint32_t intervals = 0;  // measured so far
  // Each unit's first intervals after its arm was set are left out: the
  // transition (control workers put back, treated ones moved, their pages
  // migrated) is no arm's steady state.
  uint32_t burn_in = 2;
  uint32_t burned = 0;  // worker-intervals left out so far
  // The treated arm on the soft home: its workers' ticks confined to their
  // home node, and ticks widened beyond it after (placement.spill under
  // pressure), so that a confinement cost shows as a spill, not only as a
  // loss.
  uint64_t confined_ticks = 0;
  uint64_t widened_ticks = 0;
  // New connections of the steered groups since the treatment began (after
  // the draw and any pre-period), by the node of the CPU that received them:
  // [0] the control arm's (its share, by hash), [1] the treated arm's (the
  // rest). Empty while no group is steered (dry run, or no connections lever).
  std::map<int, std::array<uint64_t, 2>> sources;
  // The whole host from the first planned interval's baselines on: the
  // units' bytes and the wall time they were sent in (both summed per
  // interval), and its CPUs' busy time and capacity (summed per tick). The
  // wall time runs between the counters' reads, not the ticks' snapshots:
  // the first read follows the work sensor's load (seconds on a slow host)
  // within its tick.
  int64_t counted_at_unix_ns = 0;
  uint64_t host_bytes = 0;
  uint64_t host_wall_ns = 0;
  double host_busy_ns = 0;
  double host_capacity_ns = 0;
  // What users feel: each arm's figures, treated / control of p50 and p99
  // service time and of run-queue wait per CPU-second, and the latency
  // guardrail's margin, its last look and, once it stopped the run, what it
  // stopped on.
  v1::ExperimentArmFigures treated_figures;
  v1::ExperimentArmFigures control_figures;
  v1::ExperimentEstimate service_p50;
  v1::ExperimentEstimate service_p99;
  v1::ExperimentEstimate run_queue_wait;
  double latency_margin = 0;  // the request's (Start sets its default)
  Levers levers;              // the request's
  // The latency guardrail's looks: as the efficiency guardrail's, at half
  // its alpha for each of its two metrics.
  std::vector<experiment::HarmLook> latency_looks;
  double latency_guardrail_p = 1;
  std::string guardrail;  // which guardrail stopped it
  std::string service_source;
  // A pre-period runs until pre_end_ns: every unit untreated, its intervals
  // summed apart (the covariate), the planned intervals not begun.
  bool in_pre = false;
  uint64_t pre_end_ns = 0;
  uint32_t pre_intervals = 0;
  uint64_t seed = 0;  // draws for units that join later
  uint64_t policy_version = 0;
  std::vector<v1::ExperimentInterval> series;
  std::vector<std::string> notes;
  v1::ExperimentEstimate work;             // the ratio of totals
  v1::ExperimentEstimate work_per_worker;  // equal-weight, secondary
  v1::ExperimentEstimate connections;
  // The guardrail's looks (at most kMaxLooks, by intervals counted after
  // the burn-in: experiment_sequential.h), and its last look.
  std::vector<experiment::HarmLook> harm_looks;
  double guardrail_p = 1;
  double guardrail_bound = 0;
  double guardrail_z = 0;
  // The interval at which the confidence sequence first excluded 1.
  uint32_t conclusive_at = 0;
  bool stop_requested = false;
  std::string stop_reason;
  std::string work_source;
  std::string pmu;
  std::string clock;  // EmulatedClockNote of this host
  // Put back at the next tick (the control arm at start).
  std::vector<int32_t> release;
  // A switchback (switchback.h): the whole host on or off by block, every
  // unit counted alike; its blocks closed so far.
  bool switchback = false;
  std::vector<bool> schedule;  // Locus on, per block
  uint32_t block_intervals = 0;
  uint32_t block = 0;            // the block under way
  uint32_t block_measured = 0;   // its intervals measured so far
  bool restore_pending = false;  // an off block began: put back this tick
  // The units' sums as the block began, and the host's busy time over its
  // counted intervals (and at the last interval's end).
  ArmSums block_start;
  double block_busy_ns = 0;
  // The complete blocks' sums: [0] off, [1] on.
  ArmSums block_sums[2];
  double busy_mark_ns = 0;
  std::vector<v1::ExperimentBlock> blocks;
};

// The workers of `snapshot` an experiment randomises: its worker targets
// (every target but a master when none is marked a worker), with the node
// each mostly ran on.
std::vector<Unit> WorkersOf(const Snapshot& snapshot);
// How many WorkersOf would give, without making them (every tick).
size_t CountWorkers(const Snapshot& snapshot);

// Units found gone are marked lost (with a note), and workers not yet units
// (an nginx reload's new workers) join the arm that has fewer active units
// in their stratum, ties broken by the seed; returns the pids that joined.
// Their stratum is `home_of` a new worker's pid (the home placement gives
// it, as at the draw) where it has one, else the node it mostly ran on;
// it is asked only when a worker joins.
std::vector<int32_t> TrackUnits(
    RunningExperiment& run, const Snapshot& snapshot,
    absl::FunctionRef<std::optional<int>(int32_t)> home_of);

// Counts this tick's treated units confined to one node and those widened
// beyond it once confined (a worker not yet pinned is neither); none in an
// A/A.
void CountWidened(RunningExperiment& run, const Snapshot& snapshot);

// One interval's reads (cumulative counts per pid) into the units and the
// arms' series; a unit absent from `samples` exited and is marked lost.
void AddInterval(RunningExperiment& run,
                 const absl::flat_hash_map<int32_t, WorkSample>& samples,
                 int64_t end_unix_ns);

// One pre-period interval's reads into the units' pre-period sums.
void AddPreInterval(RunningExperiment& run,
                    const absl::flat_hash_map<int32_t, WorkSample>& samples);

// Each unit's totals for the estimate: bytes sent, or (connections)
// connections accepted, per CPU-second.
std::vector<experiment::UnitTotals> Totals(const RunningExperiment& run,
                                           bool connections);

// The pids the policy leaves alone while it runs: the control arm, or every
// unit in A/A and in the pre-period.
absl::flat_hash_set<int32_t> Untreated(const RunningExperiment& run);

// Unit pids of one arm that are still active.
std::vector<int32_t> ActivePids(const RunningExperiment& run,
                                std::optional<experiment::Arm> arm);

}  // namespace locus

#endif  // LOCUS_AGENT_EXPERIMENT_UNITS_H_
