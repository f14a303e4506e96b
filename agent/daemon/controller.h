// locusd's answers to the gRPC calls (agent/api/agent_controller.h),
// over the control loop and what its last tick published.
#ifndef LOCUS_AGENT_DAEMON_CONTROLLER_H_
#define LOCUS_AGENT_DAEMON_CONTROLLER_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/api/agent_controller.h"
#include "agent/core/loop.h"

namespace locus {

struct ControllerHooks {
  // Restores everything the journal holds; returns (restored, errors).
  std::function<absl::StatusOr<v1::RestoreResponse>()> restore;
  std::function<v1::ProbeReport()> probe;
  std::function<uint32_t()> journal_entries;
  // Why nothing is changed (the journal cannot be written); empty if fine.
  std::function<std::string()> journal_error;
};

class DaemonController : public AgentController {
 public:
  DaemonController(Loop* loop, ControllerHooks hooks, absl::Duration period);

  // Called by the loop's sink after each tick, with that tick's metrics.
  void Update(const v1::Metrics& metrics);

  absl::StatusOr<v1::AgentStatus> GetStatus() override;
  absl::StatusOr<v1::ExplainResponse> Explain(
      const v1::ExplainRequest& request) override;
  absl::StatusOr<v1::SetModeResponse> SetMode(
      const v1::SetModeRequest& request) override;
  absl::StatusOr<v1::RestoreResponse> Restore(
      const v1::RestoreRequest& request) override;
  absl::StatusOr<v1::ProbeReport> Probe() override;

 private:
  // The subject of an explanation and the entity's last metrics; NotFound
  // when the agent knows neither them nor a story (`has_story`).
  absl::Status DescribeTask(int32_t tid, bool has_story,
                            v1::ExplainResponse& response)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status DescribeIrq(int irq, bool has_story,
                           v1::ExplainResponse& response)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Loop* loop_;
  ControllerHooks hooks_;
  absl::Duration period_;
  absl::Time started_ = absl::Now();

  absl::Mutex mu_;
  std::optional<v1::Metrics> last_ ABSL_GUARDED_BY(mu_);
};

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_CONTROLLER_H_
