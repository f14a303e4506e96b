// Fakes for the control loop's ports, and a small two-node host.
#ifndef LOCUS_TESTS_CORE_FAKES_H_
#define LOCUS_TESTS_CORE_FAKES_H_

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "agent/core/ports.h"
#include "policy/default_policy.h"
#include "tests/common/snapshot_builder.h"

namespace locus::testing {

// 2 nodes x 2 CPUs; one nginx worker (pid 100, one thread) bouncing between
// the nodes (mostly node 0) whose memory and faults are all on node 1.
inline Snapshot MisplacedWorker(uint64_t now_ns) {
  Snapshot s = MakeHost(2, 2);
  s.now_ns = now_ns;
  s.numa_balancing_mode = 1;
  Target worker = MakeWorker(s, 100, /*run_node=*/0, /*pinned_node=*/-1,
                             /*mem_node=*/1, /*pages=*/50'000);
  worker.threads[0].runtime_ns = {500'000'000, 400'000'000};
  worker.threads[0].cross_node_migrations = 8;
  s.targets = {worker};
  return s;
}

class FakeSource : public SnapshotSource {
 public:
  // Each Collect returns make(n) for the n-th call (0-based).
  explicit FakeSource(std::function<absl::StatusOr<Snapshot>(int)> make)
      : make_(std::move(make)) {}
  absl::StatusOr<Snapshot> Collect() override { return make_(calls_++); }
  int calls() const { return calls_; }

 private:
  std::function<absl::StatusOr<Snapshot>(int)> make_;
  int calls_ = 0;
};

class FakePolicy : public PolicySource {
 public:
  FakePolicy() : policy_(std::make_shared<v1::Policy>(DefaultPolicy())) {}
  PolicyState Current() override {
    return PolicyState{policy_, 1, "built-in default", true, ""};
  }
  v1::Policy& policy() { return *policy_; }

 private:
  std::shared_ptr<v1::Policy> policy_;
};

class FakeExecutor : public Executor {
 public:
  ActionResult Apply(const Action& action, bool dry_run) override {
    applied.push_back(action);
    dry_runs.push_back(dry_run);
    neighbour_ticks_at_apply.push_back(neighbour_ticks.size());
    return ActionResult{dry_run ? dry_run_outcome : outcome,
                        "",
                        0,
                        0,
                        nothing_left,
                        cpus_before};
  }
  absl::Status Revert(const Action& action) override {
    reverted.push_back(action);
    return absl::OkStatus();
  }
  void StopPageMoves() override { ++page_move_stops; }
  std::vector<ExternalEvent> TakeExternalChanges() override {
    return std::exchange(external, {});
  }
  std::vector<SteeringState> SteerConnections(
      const std::vector<ListenGroupSteering>& plan,
      const std::vector<int>& node_of_cpu, bool dry_run) override {
    steered.push_back(plan);
    steer_dry_runs.push_back(dry_run);
    (void)node_of_cpu;
    return steering_states;
  }
  absl::Status RestoreAll() override { return absl::OkStatus(); }
  absl::Status PutBack() override {
    ++restores;
    return absl::OkStatus();
  }
  void TickNeighbours(const v1::Coexist& coexist, std::optional<int>) override {
    neighbour_ticks.push_back(coexist.irqbalance());
  }

  std::vector<v1::Coexist::IrqbalanceMode> neighbour_ticks;
  std::vector<size_t> neighbour_ticks_at_apply;  // one per Apply
  std::vector<std::vector<ListenGroupSteering>> steered;
  std::vector<bool> steer_dry_runs;
  int page_move_stops = 0;
  int restores = 0;
  std::vector<SteeringState> steering_states;
  Outcome outcome = Outcome::kApplied;
  Outcome dry_run_outcome = Outcome::kDryRun;
  bool nothing_left = false;
  std::vector<int> cpus_before;  // what each applied IRQ move replaced
  std::vector<Action> applied;
  std::vector<bool> dry_runs;
  std::vector<Action> reverted;
  std::vector<ExternalEvent> external;
};

}  // namespace locus::testing

#endif  // LOCUS_TESTS_CORE_FAKES_H_
