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
#include "agent/daemon/host_identity.h"

namespace locus {

struct ControllerHooks {
  // Restores everything the journal holds; returns (restored, errors).
  std::function<absl::StatusOr<v1::RestoreResponse>()> restore;
  std::function<v1::ProbeReport()> probe;
  std::function<uint32_t()> journal_entries;
  // Why nothing is changed (the journal cannot be written); empty if fine.
  std::function<std::string()> journal_error;
  // The mode the policy in force asks for (mode.h's PolicyMode).
  std::function<Mode()> policy_mode;
  // The A/B experiment (agent/experiment/runner.h); unset: none offered.
  std::function<absl::StatusOr<v1::ExperimentReport>(
      const v1::StartExperimentRequest&, Mode)>
      start_experiment;
  std::function<absl::StatusOr<v1::ExperimentReport>()> get_experiment;
  std::function<absl::StatusOr<v1::ExperimentReport>(
      const v1::StopExperimentRequest&)>
      stop_experiment;
};

struct ControllerOptions {
  absl::Duration period = absl::Seconds(1);
  std::string version;  // "0.1.0 (build 1a2b3c4d5e6f)"
  // The loop was started with an override from locusd --mode.
  bool mode_from_flag = false;
  HostIdentity identity;
  std::string journal_path;  // as given to locusd (--journal)
};

class DaemonController : public AgentController {
 public:
  DaemonController(Loop* loop, ControllerHooks hooks,
                   ControllerOptions options);

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
  absl::StatusOr<v1::ExperimentReport> StartExperiment(
      const v1::StartExperimentRequest& request) override;
  absl::StatusOr<v1::ExperimentReport> GetExperiment() override;
  absl::StatusOr<v1::ExperimentReport> StopExperiment(
      const v1::StopExperimentRequest& request) override;

 private:
  // The subject of an explanation and the entity's last metrics; NotFound
  // when the agent knows neither them nor a story (`has_story`), or with
  // the reason when a selector matched the process but it is not trusted.
  absl::Status DescribeTask(int32_t tid, bool has_story,
                            v1::ExplainResponse& response)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status DescribeIrq(int irq, bool has_story,
                           v1::ExplainResponse& response)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // The mode now, where it comes from and what the policy says.
  void DescribeMode(v1::AgentStatus& status);
  // Sets the loop's override (MODE_UNSPECIFIED: none) and its source.
  void Override(Mode mode, v1::ModeSource source, v1::AgentMode* previous);

  Loop* loop_;
  ControllerHooks hooks_;
  const ControllerOptions options_;
  absl::Time started_ = absl::Now();

  // The loop holds the override; this says whose it is. Held across the
  // loop's SetMode so that the two agree.
  absl::Mutex mode_mu_;
  v1::ModeSource mode_source_ ABSL_GUARDED_BY(mode_mu_);

  absl::Mutex mu_;
  std::optional<v1::Metrics> last_ ABSL_GUARDED_BY(mu_);
};

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_CONTROLLER_H_
