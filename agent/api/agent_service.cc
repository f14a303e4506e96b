#include "agent/api/agent_service.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace locus {
namespace {

// How often a waiting Subscribe checks for cancellation and shutdown.
constexpr absl::Duration kStreamPoll = absl::Milliseconds(100);

template <typename T>
grpc::Status Forward(absl::StatusOr<T> result, T* response) {
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

AgentService::AgentService(MetricsHub* hub, AgentController* controller,
                           AgentServiceOptions options)
    : hub_(hub), controller_(controller), options_(std::move(options)) {}

grpc::Status AgentService::Subscribe(grpc::ServerContext* context,
                                     const v1::SubscribeRequest* request,
                                     grpc::ServerWriter<v1::Metrics>* writer) {
  auto subscription = hub_->Subscribe();
  if (!subscription.ok()) return ToGrpcStatus(subscription.status());
  uint32_t sent = 0;
  while (!stopping_ && !context->IsCancelled()) {
    if (request->max_messages() != 0 && sent >= request->max_messages()) break;
    std::optional<v1::Metrics> message = (*subscription)->Next(kStreamPoll);
    if (!message.has_value()) {
      if ((*subscription)->closed()) break;
      continue;
    }
    // A slow client blocks only this thread here; meanwhile its queue in the
    // hub overflows and the loss is counted.
    if (!writer->Write(*message)) break;
    ++sent;
  }
  return grpc::Status::OK;
}

grpc::Status AgentService::GetStatus(grpc::ServerContext*,
                                     const v1::GetStatusRequest*,
                                     v1::AgentStatus* response) {
  grpc::Status status = Forward(controller_->GetStatus(), response);
  if (status.ok()) {
    response->set_subscribers(static_cast<uint32_t>(hub_->subscriber_count()));
  }
  return status;
}

grpc::Status AgentService::Explain(grpc::ServerContext*,
                                   const v1::ExplainRequest* request,
                                   v1::ExplainResponse* response) {
  if (request->subject_case() == v1::ExplainRequest::SUBJECT_NOT_SET) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "Explain needs a tid or an irq");
  }
  return Forward(controller_->Explain(*request), response);
}

grpc::Status AgentService::Refuse(const char* call) const {
  return grpc::Status(
      grpc::StatusCode::PERMISSION_DENIED,
      options_.socket_group_name.empty()
          ? absl::StrCat(call, " changes the agent: it needs root")
          : absl::StrCat(call,
                         " changes the agent: it needs root or membership in ",
                         "group '", options_.socket_group_name,
                         "' (the socket's group)"));
}

grpc::Status AgentService::SetMode(grpc::ServerContext*,
                                   const v1::SetModeRequest* request,
                                   v1::SetModeResponse* response) {
  if (!options_.allow_mutations) return Refuse("SetMode");
  if (!request->follow_policy() && request->mode() != v1::AGENT_MODE_ENFORCE &&
      request->mode() != v1::AGENT_MODE_DRY_RUN) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "SetMode needs mode enforce or dry_run, or "
                        "follow_policy");
  }
  return Forward(controller_->SetMode(*request), response);
}

grpc::Status AgentService::Restore(grpc::ServerContext*,
                                   const v1::RestoreRequest* request,
                                   v1::RestoreResponse* response) {
  if (!options_.allow_mutations) return Refuse("Restore");
  return Forward(controller_->Restore(*request), response);
}

grpc::Status AgentService::Probe(grpc::ServerContext*, const v1::ProbeRequest*,
                                 v1::ProbeReport* response) {
  return Forward(controller_->Probe(), response);
}

}  // namespace locus
