// What the gRPC service asks of the daemon. locusd implements it over its
// control loop; tests implement it with a fake. Calls arrive on gRPC threads,
// concurrently with each other and with the loop.
#ifndef LOCUS_AGENT_API_AGENT_CONTROLLER_H_
#define LOCUS_AGENT_API_AGENT_CONTROLLER_H_

#include "absl/status/statusor.h"
#include "locus/v1/agent.pb.h"

namespace locus {

class AgentController {
 public:
  virtual ~AgentController() = default;

  virtual absl::StatusOr<v1::AgentStatus> GetStatus() = 0;
  // NOT_FOUND when the agent knows nothing about that tid or IRQ.
  virtual absl::StatusOr<v1::ExplainResponse> Explain(
      const v1::ExplainRequest& request) = 0;
  virtual absl::StatusOr<v1::SetModeResponse> SetMode(
      const v1::SetModeRequest& request) = 0;
  virtual absl::StatusOr<v1::RestoreResponse> Restore(
      const v1::RestoreRequest& request) = 0;
  virtual absl::StatusOr<v1::ProbeReport> Probe() = 0;
  // The A/B experiment (agent.proto's StartExperiment and the rest):
  // FAILED_PRECONDITION when one runs already (start) or none does (stop),
  // NOT_FOUND when there was none yet (get).
  virtual absl::StatusOr<v1::ExperimentReport> StartExperiment(
      const v1::StartExperimentRequest& request) = 0;
  virtual absl::StatusOr<v1::ExperimentReport> GetExperiment() = 0;
  virtual absl::StatusOr<v1::ExperimentReport> StopExperiment(
      const v1::StopExperimentRequest& request) = 0;
};

}  // namespace locus

#endif  // LOCUS_AGENT_API_AGENT_CONTROLLER_H_
