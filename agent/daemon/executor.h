// The loop's Executor over the real actuators and journal. Calls come from
// the loop thread and from RPC threads (Restore), so they are serialized.
#ifndef LOCUS_AGENT_DAEMON_EXECUTOR_H_
#define LOCUS_AGENT_DAEMON_EXECUTOR_H_

#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "agent/act/actuators.h"
#include "agent/core/ports.h"

namespace locus {

class ActuatorExecutor : public Executor {
 public:
  explicit ActuatorExecutor(std::unique_ptr<Actuators> actuators)
      : actuators_(std::move(actuators)) {}

  ActionResult Apply(const Action& action, bool dry_run) override;
  absl::Status Revert(const Action& action) override;
  std::vector<ExternalEvent> TakeExternalChanges() override;
  absl::Status RestoreAll() override;

  // The same restore, with its per-entry report (for the Restore RPC).
  absl::StatusOr<RestoreReport> RestoreAllWithReport();
  uint32_t journal_entries();
  std::string journal_error();  // empty while records can be written
  std::set<int> unmanageable_irqs();

 private:
  absl::Mutex mu_;
  std::unique_ptr<Actuators> actuators_ ABSL_GUARDED_BY(mu_);
};

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_EXECUTOR_H_
