#include "agent/api/agent_service.h"

#include <cstdint>
#include <functional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/log.h"

namespace locus {
namespace {

// How often a waiting Subscribe checks for cancellation and shutdown.
constexpr absl::Duration kStreamPoll = absl::Milliseconds(100);
// How often a stream whose client has not read the last message looks
// again: a client back from a pause gets the newest tick this soon.
constexpr absl::Duration kUnreadPoll = absl::Milliseconds(20);

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

namespace {

// Lets the hub end a stream whose handler is blocked in Write() (its client
// reads nothing): the call is cancelled then, and only then, since a handler
// that is waiting for the next tick sees the drop by itself and can tell the
// client why.
class StreamGuard {
 public:
  explicit StreamGuard(grpc::ServerContext* context) : context_(context) {}
  void Dropped() {
    absl::MutexLock lock(&mu_);
    dropped_ = true;
    if (writing_) context_->TryCancel();
  }
  // False once dropped: do not start a write.
  bool BeginWrite() {
    absl::MutexLock lock(&mu_);
    writing_ = !dropped_;
    return writing_;
  }
  void EndWrite() {
    absl::MutexLock lock(&mu_);
    writing_ = false;
  }

 private:
  grpc::ServerContext* const context_;
  absl::Mutex mu_;
  bool dropped_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

grpc::Status AgentService::Subscribe(grpc::ServerContext* context,
                                     const v1::SubscribeRequest* request,
                                     grpc::ServerWriter<v1::Metrics>* writer) {
  StreamGuard guard(context);
  SubscriberInfo info;
  if (options_.subscriber_of) {
    info = options_.subscriber_of(context->peer());
  } else {
    info.peer = context->peer();
  }
  info.on_dropped = [&guard] { guard.Dropped(); };
  const std::function<uint64_t()> unread = info.unread_bytes;
  auto subscription = hub_->Subscribe(std::move(info));
  if (!subscription.ok()) return ToGrpcStatus(subscription.status());
  uint32_t sent = 0;
  while (!stopping_ && !context->IsCancelled()) {
    if (request->max_messages() != 0 && sent >= request->max_messages()) break;
    // Nothing more for a client that has not read what it was sent (paused,
    // or slower than the ticks): gRPC's window and the socket buffers would
    // otherwise hold dozens of small ticks and replay them all on resume.
    // Meanwhile the hub keeps only the newest and counts the rest, so the
    // next message is the current tick with the count missed.
    if (unread && unread() > 0) {
      if (!(*subscription)->dropped_reason().ok()) break;
      absl::SleepFor(kUnreadPoll);
      continue;
    }
    std::optional<v1::Metrics> message = (*subscription)->Next(kStreamPoll);
    if (!message.has_value()) {
      if ((*subscription)->closed()) break;
      continue;
    }
    // A slow client blocks only this thread here; meanwhile its queue in the
    // hub overflows and the loss is counted, until the hub drops it.
    if (!guard.BeginWrite()) break;
    const bool written = writer->Write(*message);
    guard.EndWrite();
    if (!written) break;
    ++sent;
  }
  return ToGrpcStatus((*subscription)->dropped_reason());
}

grpc::Status AgentService::GetStatus(grpc::ServerContext* context,
                                     const v1::GetStatusRequest*,
                                     v1::AgentStatus* response) {
  // A burst of streams reset as soon as opened (HTTP/2 rapid reset) queues
  // thousands of calls; building a status for each would only waste time.
  if (context->IsCancelled()) return grpc::Status::CANCELLED;
  grpc::Status status = Forward(controller_->GetStatus(), response);
  if (status.ok()) {
    response->set_subscribers(static_cast<uint32_t>(hub_->subscriber_count()));
  }
  return status;
}

grpc::Status AgentService::Explain(grpc::ServerContext* context,
                                   const v1::ExplainRequest* request,
                                   v1::ExplainResponse* response) {
  if (context->IsCancelled()) return grpc::Status::CANCELLED;  // as GetStatus
  if (request->subject_case() == v1::ExplainRequest::SUBJECT_NOT_SET) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "Explain needs a tid or an irq");
  }
  return Forward(controller_->Explain(*request), response);
}

grpc::Status AgentService::Refuse(const char* call) const {
  std::string needs;
  if (options_.over_tcp) {
    // TCP carries no credentials: root is refused here like anyone else.
    needs = absl::StrCat(
        "it is refused over TCP, which cannot tell who is calling; use the "
        "Unix socket ",
        options_.socket_path, " as root",
        options_.socket_group_name.empty()
            ? std::string()
            : absl::StrCat(" or a member of group '",
                           options_.socket_group_name, "'"));
  } else if (options_.socket_group_name.empty()) {
    needs = "it needs root";
  } else {
    needs = absl::StrCat("it needs root or membership in group '",
                         options_.socket_group_name, "' (the socket's group)");
  }
  return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                      absl::StrCat(call, " changes the agent: ", needs));
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

grpc::Status AgentService::Probe(grpc::ServerContext* context,
                                 const v1::ProbeRequest*,
                                 v1::ProbeReport* response) {
  if (context->IsCancelled()) return grpc::Status::CANCELLED;  // as GetStatus
  return Forward(controller_->Probe(), response);
}

grpc::Status AgentService::SetLogLevel(grpc::ServerContext*,
                                       const v1::SetLogLevelRequest* request,
                                       v1::SetLogLevelResponse* response) {
  if (!options_.allow_mutations) return Refuse("SetLogLevel");
  if (request->level() < 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat("SetLogLevel: level ", request->level(),
                                     " is negative; 0 is the quietest"));
  }
  response->set_previous(LogVerbosity());
  SetLogVerbosity(request->level());
  response->set_level(request->level());
  LogInfo("log level ", response->previous(), " → ", request->level());
  return grpc::Status::OK;
}

grpc::Status AgentService::StartExperiment(
    grpc::ServerContext*, const v1::StartExperimentRequest* request,
    v1::ExperimentReport* response) {
  if (!options_.allow_mutations) return Refuse("StartExperiment");
  return Forward(controller_->StartExperiment(*request), response);
}

grpc::Status AgentService::GetExperiment(grpc::ServerContext* context,
                                         const v1::GetExperimentRequest*,
                                         v1::ExperimentReport* response) {
  if (context->IsCancelled()) return grpc::Status::CANCELLED;  // as GetStatus
  return Forward(controller_->GetExperiment(), response);
}

grpc::Status AgentService::StopExperiment(
    grpc::ServerContext*, const v1::StopExperimentRequest* request,
    v1::ExperimentReport* response) {
  if (!options_.allow_mutations) return Refuse("StopExperiment");
  return Forward(controller_->StopExperiment(*request), response);
}

}  // namespace locus
