// The locus.v1.Agent gRPC service: streams the hub's metrics and forwards the
// other calls to an AgentController. One instance serves connections from
// peers allowed to mutate, another (allow_mutations = false) everyone else;
// the server decides which by the peer's credentials at accept time.
#ifndef LOCUS_AGENT_API_AGENT_SERVICE_H_
#define LOCUS_AGENT_API_AGENT_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "agent/api/agent_controller.h"
#include "agent/api/metrics_hub.h"
#include "locus/v1/agent.grpc.pb.h"

namespace locus {

// absl and gRPC share the canonical code numbering.
grpc::Status ToGrpcStatus(const absl::Status& status);

struct AgentServiceOptions {
  bool allow_mutations = false;
  // Serves TCP connections: refusals say that changing calls need the Unix
  // socket, not root (which TCP cannot tell).
  bool over_tcp = false;
  // Names the group in refusals: "needs root or group 'locus'"; empty when
  // the socket is root's alone.
  std::string socket_group_name;
  std::string socket_path;  // named in refusals over TCP
  // Who a Subscribe call's peer (ServerContext::peer()) is, for the hub's
  // slots; unset: an unprivileged peer named by that string.
  std::function<SubscriberInfo(const std::string& grpc_peer)> subscriber_of;
};

class AgentService final : public v1::Agent::Service {
 public:
  AgentService(MetricsHub* hub, AgentController* controller,
               AgentServiceOptions options);

  // Makes open Subscribe streams end within one poll interval, so that
  // server shutdown does not wait for clients to hang up.
  void Stop() { stopping_ = true; }

  grpc::Status Subscribe(grpc::ServerContext* context,
                         const v1::SubscribeRequest* request,
                         grpc::ServerWriter<v1::Metrics>* writer) override;
  grpc::Status GetStatus(grpc::ServerContext* context,
                         const v1::GetStatusRequest* request,
                         v1::AgentStatus* response) override;
  grpc::Status Explain(grpc::ServerContext* context,
                       const v1::ExplainRequest* request,
                       v1::ExplainResponse* response) override;
  grpc::Status SetMode(grpc::ServerContext* context,
                       const v1::SetModeRequest* request,
                       v1::SetModeResponse* response) override;
  grpc::Status Restore(grpc::ServerContext* context,
                       const v1::RestoreRequest* request,
                       v1::RestoreResponse* response) override;
  grpc::Status Probe(grpc::ServerContext* context,
                     const v1::ProbeRequest* request,
                     v1::ProbeReport* response) override;
  // Sets the process's log verbosity (common/log.h) itself: it is the
  // logger's, not the control loop's.
  grpc::Status SetLogLevel(grpc::ServerContext* context,
                           const v1::SetLogLevelRequest* request,
                           v1::SetLogLevelResponse* response) override;
  // The A/B experiment: starting and stopping one change what the agent
  // does to half the workers, so they are mutating like SetMode; reading
  // its report is open to whoever may read the status.
  grpc::Status StartExperiment(grpc::ServerContext* context,
                               const v1::StartExperimentRequest* request,
                               v1::ExperimentReport* response) override;
  grpc::Status GetExperiment(grpc::ServerContext* context,
                             const v1::GetExperimentRequest* request,
                             v1::ExperimentReport* response) override;
  grpc::Status StopExperiment(grpc::ServerContext* context,
                              const v1::StopExperimentRequest* request,
                              v1::ExperimentReport* response) override;

 private:
  grpc::Status Refuse(const char* call) const;

  MetricsHub* const hub_;
  AgentController* const controller_;
  const AgentServiceOptions options_;
  std::atomic<bool> stopping_{false};
};

}  // namespace locus

#endif  // LOCUS_AGENT_API_AGENT_SERVICE_H_
