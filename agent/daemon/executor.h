// The loop's Executor over the real actuators and journal. Calls come from
// the loop thread and from RPC threads (Restore), so they are serialized.
#ifndef LOCUS_AGENT_DAEMON_EXECUTOR_H_
#define LOCUS_AGENT_DAEMON_EXECUTOR_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "agent/act/actuators.h"
#include "agent/act/connections/connection_steering.h"
#include "agent/act/connections/reuseport_restore.h"
#include "agent/act/connections/steering_journal.h"
#include "agent/act/neighbours/neighbours.h"
#include "agent/core/ports.h"

namespace locus {

// What connection steering needs: the kernel's reuseport calls, a finder of
// groups for a restore that cannot reach them through discovery, and the
// latest discovery (the host scan's, agent/daemon/listener_scan.h).
struct SteeringParts {
  std::unique_ptr<ReuseportOps> ops;
  std::unique_ptr<ListenerFinder> finder;
  std::function<std::vector<ListenGroup>()> groups;
};

class ActuatorExecutor : public Executor {
 public:
  // Without neighbour ops (tests), irqbalance and numad are not told
  // anything.
  ActuatorExecutor(std::unique_ptr<Actuators> actuators, SteeringParts steering,
                   NeighbourOps neighbours = {});

  ActionResult Apply(const Action& action, bool dry_run) override;
  absl::Status Revert(const Action& action) override;
  std::vector<ExternalEvent> TakeExternalChanges() override;
  std::vector<SteeringState> SteerConnections(
      const std::vector<ListenGroupSteering>& plan,
      const std::vector<int>& node_of_cpu, bool dry_run) override;
  // At exit: lets irqbalance answer what it was asked (Neighbours::Finish),
  // detaches every steering program, then restores the rest.
  absl::Status RestoreAll() override;
  absl::Status PutBack() override;
  void StopPageMoves() override;
  void TickNeighbours(const v1::Coexist& coexist,
                      std::optional<int> numa_balancing) override;

  // The same restore, with its per-entry report (for the Restore RPC).
  absl::StatusOr<RestoreReport> RestoreAllWithReport();
  uint32_t journal_entries();
  std::string journal_error();  // empty while records can be written
  std::set<int> unmanageable_irqs();
  // irqbalance and numad as the last tick left them.
  std::vector<v1::Neighbour> neighbours();

 private:
  std::vector<SteeringState> StatesOf(
      const std::vector<ListenGroup>& groups,
      const std::vector<ListenGroupSteering>& plan, const std::string& dry_run)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  std::unique_ptr<Actuators> actuators_ ABSL_GUARDED_BY(mu_);
  SteeringParts parts_;
  JournalSteering steering_journal_ ABSL_GUARDED_BY(mu_);
  ConnectionSteering steering_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Neighbours> neighbours_ ABSL_GUARDED_BY(mu_);
  // Each group's counters at the last tick, for the tick's deltas.
  std::map<std::string, std::map<int, ReuseportPathCounts>> last_counts_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_EXECUTOR_H_
