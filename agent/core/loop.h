// The control loop: Snapshot -> Decide -> journal + actuators -> report, once
// per tick, with the closed loop (verifier.h) reverting actions that made
// things worse and backing off entities someone else changed.
#ifndef LOCUS_AGENT_CORE_LOOP_H_
#define LOCUS_AGENT_CORE_LOOP_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "agent/core/ports.h"
#include "agent/core/verifier.h"
#include "policy/history.h"

namespace locus {

using Mode = v1::Policy::Mode;

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
  uint64_t overruns = 0;  // ticks so far that took longer than the period
  absl::Status collect_status;
  std::shared_ptr<const Snapshot> snapshot;  // null when collection failed
  Plan plan;
  Mode mode = v1::Policy::MODE_ENFORCE;
  std::vector<ActionRecord> actions;
  std::vector<RevertRecord> reverts;
  std::vector<ExternalEvent> external;
  std::vector<EntityKey> held_down;  // entities the loop leaves alone for now
  PolicyState policy;
};

// One line of an entity's story, for Explain.
struct Decision {
  uint64_t tick = 0;
  uint64_t now_ns = 0;
  std::string what;  // "applied: pin to node 1 cpus 8-15 (82% remote ...)"
};

class Loop {
 public:
  using Sink = std::function<void(const TickReport&)>;
  // Monotonic nanoseconds; injectable so tests run ticks without waiting.
  using Clock = std::function<uint64_t()>;

  // All borrowed; they must outlive the loop.
  Loop(LoopOptions options, SnapshotSource* source, PolicySource* policy,
       Executor* executor, Sink sink, Clock clock);

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
  // The last decisions about a process (by pid or any of its tids) or an
  // IRQ; empty when there are none.
  std::vector<Decision> ExplainTask(int32_t tid) const;
  std::vector<Decision> ExplainIrq(int irq) const;

 private:
  Mode EffectiveMode(const v1::Policy& policy) const;
  void Note(EntityKey key, uint64_t tick, uint64_t now_ns, std::string what);
  void RememberThreads(const Snapshot& snapshot);

  LoopOptions options_;
  SnapshotSource* source_;
  PolicySource* policy_;
  Executor* executor_;
  Sink sink_;
  Clock clock_;

  // Loop thread only.
  History history_;
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
  std::atomic<int> mode_override_;

  mutable absl::Mutex explain_mu_;
  absl::flat_hash_map<EntityKey, std::deque<Decision>> explain_
      ABSL_GUARDED_BY(explain_mu_);
  absl::flat_hash_map<int32_t, int32_t> tid_pid_ ABSL_GUARDED_BY(explain_mu_);
};

// "pin pid 1234 tid 1240 to node 1 cpus 8-15" and the like.
std::string Describe(const Action& action);

}  // namespace locus

#endif  // LOCUS_AGENT_CORE_LOOP_H_
