// The control loop: Snapshot -> Decide -> journal + actuators -> report, once
// per tick, with the closed loop (verifier.h) reverting actions that made
// things worse and backing off entities someone else changed.
#ifndef LOCUS_AGENT_CORE_LOOP_H_
#define LOCUS_AGENT_CORE_LOOP_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "agent/core/explain_history.h"
#include "agent/core/mode.h"
#include "agent/core/ports.h"
#include "agent/core/refusal_log.h"
#include "agent/core/verifier.h"
#include "common/clock.h"
#include "policy/history.h"

namespace locus {

struct LoopOptions {
  absl::Duration tick = absl::Seconds(1);
  VerifierOptions verifier;
  // How long an entity someone else changed is left alone.
  absl::Duration external_hold = absl::Hours(1);
  // Overrides the policy's mode until SetMode; MODE_UNSPECIFIED: none.
  Mode mode = v1::Policy::MODE_UNSPECIFIED;
  // Decisions kept per entity for Explain.
  size_t explain_depth = 16;
};

struct ActionRecord {
  Action action;
  ActionResult result;
};

struct RevertRecord {
  Verdict verdict;
  absl::Status status;
};

// Everything one tick did, for the metrics stream and the log.
struct TickReport {
  uint64_t tick = 0;
  uint64_t now_ns = 0;
  absl::Duration took;
  // CPU time the loop's thread spent on the tick; the rest of `took` it
  // waited (for a CPU, a lock, the kernel).
  absl::Duration cpu;
  uint64_t overruns = 0;  // ticks so far that took longer than the period
  // Actions so far that a cpuset forbade: a plan that ignored a constraint.
  uint64_t forbidden = 0;
  absl::Status collect_status;
  std::shared_ptr<const Snapshot> snapshot;  // null when collection failed
  Plan plan;
  Mode mode = v1::Policy::MODE_ENFORCE;
  std::vector<ActionRecord> actions;
  std::vector<RevertRecord> reverts;
  std::vector<ExternalEvent> external;
  std::vector<EntityKey> held_down;  // entities the loop leaves alone for now
  // Per worker (a process, or a thread worker's thread): the home node id
  // Locus gave it, and the node its soft home is widened to (-1 none).
  struct Home {
    int node = -1;
    int spill_node = -1;
  };
  std::map<int32_t, Home> homes;
  std::vector<SteeringState> connections;  // after this tick's steering
  PolicyState policy;
  // The A/B experiment as of this tick; null when none ran.
  std::shared_ptr<const v1::ExperimentReport> experiment;
};

class Loop {
 public:
  using Sink = std::function<void(const TickReport&)>;

  // All borrowed; they must outlive the loop. `clock` times the ticks
  // (a FakeClock lets tests run them without waiting).
  Loop(LoopOptions options, SnapshotSource* source, PolicySource* policy,
       Executor* executor, Sink sink, Clock* clock);

  // Borrowed; call before Run. Null (the default): no experiments.
  void set_experiment(ExperimentPort* experiment) { experiment_ = experiment; }

  // One tick, now.
  TickReport Tick();

  // Ticks every options.tick until `stop` is notified; a tick that takes
  // longer than the period is counted as an overrun and the next one starts
  // at once (no burst of catch-up ticks).
  void Run(absl::Notification& stop);

  // Thread-safe: callable from RPC threads while the loop runs.
  void SetMode(Mode mode);
  Mode mode() const;
  uint64_t ticks() const { return ticks_.load(); }
  uint64_t overruns() const { return overruns_.load(); }
  uint64_t forbidden() const { return forbidden_.load(); }
  // The last decisions about a process (by pid or any of its tids) or an
  // IRQ; empty when there are none.
  std::vector<Decision> ExplainTask(int32_t tid) const {
    return explain_.Task(tid);
  }
  std::vector<Decision> ExplainIrq(int irq) const { return explain_.Irq(irq); }
  // Why a process the selectors matched is not a target (last snapshot).
  std::optional<RefusedProcess> ExplainRefused(int32_t pid) const {
    return explain_.Refused(pid);
  }

 private:
  // The steps of a tick, in order.
  TickReport Begin();
  void BackOffExternalChanges(TickReport& report);
  // The snapshot in report.snapshot; false (and why in the report) if none.
  bool CollectSnapshot(TickReport& report);
  void RevertWhatGotWorse(const Snapshot& snap, TickReport& report);
  // The experiment's arms for this tick: the workers it puts back are
  // restored from the journal and forgotten by the history.
  ArmsThisTick Arms(const Snapshot& snap, TickReport& report);
  // A switchback's off block: this tick as a dry run, and on its first
  // (`restore`) everything journaled put back.
  void SwitchOff(bool restore, TickReport& report);
  // Decides on `snap` without the experiment's untreated workers.
  void PlanFor(const Snapshot& snap, const ArmsThisTick& arms,
               TickReport& report);
  void Act(const Action& action, const Snapshot& snap, TickReport& report);
  void Steer(const Snapshot& snap, TickReport& report);
  // (group, worker pid) -> node id its socket serves.
  using SocketNodes = std::map<std::pair<std::string, int32_t>, int>;
  void TellSockets(const Snapshot& snap, const ListenGroupSteering& steer,
                   const TickReport& report, SocketNodes& told);
  // `cpu_start_ns`: the thread's CPU time when the tick began.
  void Publish(TickReport& report, uint64_t cpu_start_ns);

  // Within Act: the dry run's result if the same action was planned in
  // the last minute, and what the outcome means for the entity's history.
  const ActionResult* PlannedAgain(const std::string& planned, uint64_t now_ns);
  void Record(const Action& action, const Snapshot& snap,
              const v1::Policy& policy, ActionResult& result);
  void Tell(const Action& action, const ActionResult& result,
            const TickReport& report);

  Mode EffectiveMode(const v1::Policy& policy) const;

  LoopOptions options_;
  SnapshotSource* source_;
  PolicySource* policy_;
  Executor* executor_;
  ExperimentPort* experiment_ = nullptr;
  Sink sink_;
  Clock* clock_;

  // Loop thread only.
  History history_;
  RefusalLog refusal_log_;  // each look-alike once, and not too many
  // Each group's problem as last logged: logged again only when it changes.
  std::map<std::string, std::string> last_steering_;
  SocketNodes socket_node_;              // as explained last
  std::vector<std::string> last_notes_;  // logged when they change
  // Dry run applies nothing, so the same actions are planned again tick
  // after tick: the ones planned in the last minute, by what they would do
  // (Describe), with what the dry run said (kDryRun) and when last planned.
  // One planned again is reported on the stream but not logged, noted or
  // looked up on the host again (with 1000 threads to pin that would be 1000
  // log lines and a few thousand /proc reads every tick). Enforce mode empties
  // it.
  struct DryRun {
    ActionResult result;
    uint64_t last_ns = 0;
  };
  absl::flat_hash_map<std::string, DryRun> last_dry_run_;
  Verifier verifier_;

  std::atomic<uint64_t> ticks_{0};
  std::atomic<uint64_t> overruns_{0};
  std::atomic<uint64_t> forbidden_{0};
  std::atomic<int> mode_override_;

  ExplainHistory explain_;
};

// "pin pid 1234 tid 1240 to node 1 cpus 8-15" and the like.
std::string Describe(const Action& action);

}  // namespace locus

#endif  // LOCUS_AGENT_CORE_LOOP_H_
