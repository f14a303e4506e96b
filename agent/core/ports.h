// The control loop's view of the rest of the agent: small interfaces that
// locusd implements over the sensors, host model, actuators and policy
// watcher, and tests implement with fakes.
#ifndef LOCUS_AGENT_CORE_PORTS_H_
#define LOCUS_AGENT_CORE_PORTS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/act/connections/reuseport_ops.h"
#include "agent/act/result.h"
#include "locus/v1/agent.pb.h"
#include "locus/v1/policy.pb.h"
#include "policy/experiment_arms.h"
#include "policy/history.h"
#include "policy/plan.h"
#include "policy/policy_state.h"
#include "policy/snapshot.h"

namespace locus {

// Builds the tick's Snapshot. Implementations keep slow reads off the loop's
// path (each slow reader refreshes on its own thread; Collect takes the
// latest), so one stuck /proc read cannot stall the tick.
class SnapshotSource {
 public:
  virtual ~SnapshotSource() = default;
  virtual absl::StatusOr<Snapshot> Collect() = 0;
};

// Something another program changed after Locus had set it.
struct ExternalEvent {
  EntityKey key;
  std::string message;
  int32_t tid = 0;  // the thread, for a task's change; 0 when not known
};

// One reuseport group after a tick's connection steering.
struct SteeringState {
  std::string group;      // ListenGroupSample::name
  bool steered = false;   // its program is attached
  bool migrates = false;  // SELECT_OR_MIGRATE
  size_t sockets = 0;
  std::string problem;  // why it is not steered, or what was left out
  // What the program did, per node id (-1: CPUs of no known node): since it
  // was attached, and since the last tick.
  std::map<int, ReuseportPathCounts> total;
  std::map<int, ReuseportPathCounts> tick;
};

// Journal + actuators.
class Executor {
 public:
  virtual ~Executor() = default;
  // Journals the entity's original value, then acts (or, with dry_run,
  // reports what it would do and changes nothing).
  virtual ActionResult Apply(const Action& action, bool dry_run) = 0;
  // Puts the entity an applied action moved back to its journaled original.
  virtual absl::Status Revert(const Action& action) = 0;
  // Entities someone else changed since the last call; already backed off.
  virtual std::vector<ExternalEvent> TakeExternalChanges() = 0;
  // Steers each group of `plan` as it says and every other listed group
  // not at all (with dry_run: none, each saying why); `node_of_cpu` is the
  // topology's cpu -> node id. Never fails as a whole: each group says.
  virtual std::vector<SteeringState> SteerConnections(
      const std::vector<ListenGroupSteering>& plan,
      const std::vector<int>& node_of_cpu, bool dry_run) = 0;
  // Restores everything journaled (exit, or a Restore request).
  virtual absl::Status RestoreAll() = 0;
  // The same while the agent goes on (a switchback's off block): as a
  // Restore request does, without first winding up the exchanges with
  // irqbalance that RestoreAll, at exit, lets finish.
  virtual absl::Status PutBack() = 0;
  // Drops every page move queued or under way (the call in progress ends):
  // each dry-run tick, so that a switch to dry run stops the movers even
  // when that tick plans nothing.
  virtual void StopPageMoves() = 0;
  // Once per tick, after the plan and the steering: tells irqbalance and
  // numad what Locus manages now, as the policy's coexist says (an
  // executor without neighbours does nothing). Never blocks. In a dry run
  // nothing new is asked for (no IRQ is moved), and what Locus already
  // holds stays handed over until it is restored. `numa_balancing` is
  // kernel.numa_balancing as this tick's snapshot read it (nullopt: none).
  virtual void TickNeighbours(const v1::Coexist& coexist,
                              std::optional<int> numa_balancing) {
    (void)coexist;
    (void)numa_balancing;
  }
};

class PolicySource {
 public:
  virtual ~PolicySource() = default;
  virtual PolicyState Current() = 0;
};

// What an A/B experiment asks of one tick (agent/experiment/runner.h).
struct ArmsThisTick {
  // The workers the policy leaves alone this tick: the control arm, every
  // unit in an A/A experiment, and the treated arm on the tick the
  // guardrail stops it.
  absl::flat_hash_set<int32_t> untreated;
  // Workers to put back now as they were before Locus (their journaled
  // pins restored, their page moves dropped): the control arm at start,
  // the treated arm when the guardrail stops the experiment.
  std::vector<int32_t> release;
  // What the policy may do to the treated arm (`--levers`).
  Levers levers;
  // A switchback's off block: the whole host as the kernel leaves it. On
  // its first tick (`restore`) everything journaled is put back, as on
  // restore; on each of its ticks the plan is made but not carried out, as
  // in a dry run.
  bool off = false;
  bool restore = false;
  // The experiment's report as of this tick (without units and series);
  // null when none ran this tick.
  std::shared_ptr<const v1::ExperimentReport> report;
};

class ExperimentPort {
 public:
  virtual ~ExperimentPort() = default;
  // Called each tick after the snapshot, before planning; `history` is the
  // loop's, as the plan will read it (the arms are drawn within the homes
  // placement gives).
  virtual ArmsThisTick OnTick(const Snapshot& snapshot, v1::Policy::Mode mode,
                              const PolicyState& policy,
                              const History& history) = 0;
  // Called each tick after connection steering with what it did: where
  // each arm's new connections arrived.
  virtual void OnConnections(const std::vector<SteeringState>& /*groups*/) {}
};

}  // namespace locus

#endif  // LOCUS_AGENT_CORE_PORTS_H_
