#include "agent/daemon/controller.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "agent/daemon/metrics_convert.h"
#include "agent/daemon/worker_memory.h"
#include "common/log.h"
#include "common/printable.h"
#include "common/status_macros.h"
#include "google/protobuf/util/time_util.h"

namespace locus {

using google::protobuf::util::TimeUtil;

namespace {

// " (reason)", or nothing when none was given.
std::string Because(const std::string& reason) {
  return reason.empty() ? "" : absl::StrCat(" (", reason, ")");
}

}  // namespace

DaemonController::DaemonController(Loop* loop, ControllerHooks hooks,
                                   ControllerOptions options)
    : loop_(loop),
      hooks_(std::move(hooks)),
      options_(std::move(options)),
      mode_source_(options_.mode_from_flag ? v1::MODE_SOURCE_FLAG
                                           : v1::MODE_SOURCE_POLICY) {}

void DaemonController::Update(const v1::Metrics& metrics) {
  absl::MutexLock lock(&mu_);
  last_ = metrics;
}

absl::StatusOr<v1::AgentStatus> DaemonController::GetStatus() {
  v1::AgentStatus status;
  status.set_version(options_.version);
  status.set_hostname(options_.identity.hostname);
  status.set_boot_id(options_.identity.boot_id);
  status.set_journal_path(options_.journal_path);
  DescribeMode(status);
  *status.mutable_started() =
      TimeUtil::NanosecondsToTimestamp(absl::ToUnixNanos(started_));
  status.set_tick(loop_->ticks());
  status.set_tick_period_ns(absl::ToInt64Nanoseconds(options_.period));
  status.set_overruns_total(loop_->overruns());
  status.set_actions_forbidden_total(loop_->forbidden());
  if (hooks_.journal_entries) {
    status.set_journal_entries(hooks_.journal_entries());
  }
  if (hooks_.journal_error) status.set_journal_error(hooks_.journal_error());
  absl::MutexLock lock(&mu_);
  if (last_) {
    *status.mutable_policy() = last_->policy();
    *status.mutable_sensors() = last_->sensors();
    absl::flat_hash_set<int32_t> pids;
    uint32_t held = 0;
    for (const v1::TaskMetrics& task : last_->tasks()) {
      pids.insert(task.pid());
      held += task.held_down();
    }
    status.set_targets(pids.size());
    status.set_threads(last_->tasks_size());
    uint32_t managed = 0;
    for (const v1::IrqMetrics& irq : last_->irqs()) {
      managed += !irq.kernel_managed();
      held += irq.held_down();
    }
    status.set_managed_irqs(managed);
    status.set_held_down(held);
    status.set_numa_nodes(last_->nodes_size());
    *status.mutable_connections() = last_->connections();
    *status.mutable_neighbours() = last_->neighbours();
    *status.mutable_memory_tiering() = last_->memory_tiering();
    AddWorkerMemory(*last_, status);
  }
  return status;
}

void DaemonController::DescribeMode(v1::AgentStatus& status) {
  absl::MutexLock lock(&mode_mu_);
  status.set_mode(ToAgentMode(loop_->mode()));
  status.set_mode_source(mode_source_);
  if (hooks_.policy_mode) {
    status.set_policy_mode(ToAgentMode(hooks_.policy_mode()));
  }
}

absl::StatusOr<v1::ExplainResponse> DaemonController::Explain(
    const v1::ExplainRequest& request) {
  v1::ExplainResponse response;
  std::vector<Decision> story;
  absl::MutexLock lock(&mu_);
  if (request.has_tid()) {
    story = loop_->ExplainTask(request.tid());
    RETURN_IF_ERROR(DescribeTask(request.tid(), !story.empty(), response));
  } else if (request.has_irq()) {
    story = loop_->ExplainIrq(request.irq());
    RETURN_IF_ERROR(DescribeIrq(request.irq(), !story.empty(), response));
  } else {
    return absl::InvalidArgumentError("explain needs a tid or an irq");
  }
  size_t limit = request.max_decisions() ? request.max_decisions() : 16;
  for (auto it = story.rbegin(); it != story.rend() && limit > 0;
       ++it, --limit) {
    v1::Decision* d = response.add_decisions();
    d->set_tick(it->tick);
    // A note quotes comms and reasons read from the host: shown as is by
    // any client, so made inert here (Printable is idempotent: a client that
    // escapes again changes nothing).
    d->set_note(Printable(it->what));
  }
  return response;
}

absl::Status DaemonController::DescribeTask(int32_t tid, bool has_story,
                                            v1::ExplainResponse& response) {
  if (last_) {
    for (const v1::TaskMetrics& task : last_->tasks()) {
      if (task.tid() == tid) *response.mutable_task() = task;
    }
    if (response.has_task())
      *response.mutable_memory_tiering() = last_->memory_tiering();
  }
  if (!response.has_task()) {
    // A look-alike the scan refused: say why, not merely "not a target".
    if (std::optional<RefusedProcess> refused = loop_->ExplainRefused(tid)) {
      return absl::NotFoundError(Printable(RefusalMessage(*refused)));
    }
    if (!has_story) {
      return absl::NotFoundError(
          absl::StrCat("thread ", tid, " is not a target and has no history"));
    }
    response.set_subject(absl::StrCat("thread ", tid));
    return absl::OkStatus();
  }
  const v1::TaskMetrics& task = response.task();
  response.set_subject(absl::StrCat(
      "thread ", task.tid(), " (", Printable(task.comm()),
      task.role() == v1::TASK_ROLE_WORKER          ? " worker"
      : task.role() == v1::TASK_ROLE_WORKER_THREAD ? " worker thread"
      : task.role() == v1::TASK_ROLE_MASTER        ? " master"
                                                   : "",
      ", pid ", task.pid(), ")"));
  return absl::OkStatus();
}

absl::Status DaemonController::DescribeIrq(int irq, bool has_story,
                                           v1::ExplainResponse& response) {
  if (last_) {
    for (const v1::IrqMetrics& metrics : last_->irqs()) {
      if (metrics.irq() == irq) *response.mutable_irq() = metrics;
    }
  }
  if (!response.has_irq() && !has_story) {
    return absl::NotFoundError(
        absl::StrCat("irq ", irq, " is unknown to the agent"));
  }
  response.set_subject(response.has_irq()
                           ? absl::StrCat("irq ", irq, " (",
                                          Printable(response.irq().name()), ")")
                           : absl::StrCat("irq ", irq));
  return absl::OkStatus();
}

void DaemonController::Override(Mode mode, v1::ModeSource source,
                                v1::AgentMode* previous) {
  absl::MutexLock lock(&mode_mu_);
  if (previous != nullptr) *previous = ToAgentMode(loop_->mode());
  loop_->SetMode(mode);
  mode_source_ = source;
}

absl::StatusOr<v1::SetModeResponse> DaemonController::SetMode(
    const v1::SetModeRequest& request) {
  Mode mode = v1::Policy::MODE_UNSPECIFIED;
  if (request.follow_policy()) {
    if (request.mode() != v1::AGENT_MODE_UNSPECIFIED) {
      return absl::InvalidArgumentError(
          "follow_policy takes no mode: the policy's applies");
    }
  } else if (request.mode() == v1::AGENT_MODE_ENFORCE) {
    mode = v1::Policy::MODE_ENFORCE;
  } else if (request.mode() == v1::AGENT_MODE_DRY_RUN) {
    mode = v1::Policy::MODE_DRY_RUN;
  } else {
    return absl::InvalidArgumentError(
        "mode must be enforce or dry_run, or follow_policy");
  }
  v1::SetModeResponse response;
  v1::AgentMode previous = v1::AGENT_MODE_UNSPECIFIED;
  v1::ModeSource source = request.follow_policy() ? v1::MODE_SOURCE_POLICY
                                                  : v1::MODE_SOURCE_RUNTIME;
  Override(mode, source, &previous);
  response.set_previous(previous);
  response.set_mode(ToAgentMode(loop_->mode()));
  response.set_source(source);
  if (request.follow_policy()) {
    LogInfo("mode follows the policy again: ", ModeName(loop_->mode()),
            Because(request.reason()));
  } else {
    LogInfo("mode set to ", ModeName(mode), " (runtime override)",
            Because(request.reason()));
  }
  return response;
}

absl::StatusOr<v1::RestoreResponse> DaemonController::Restore(
    const v1::RestoreRequest& request) {
  // Restoring and then acting again at the next tick would undo the
  // restore: switch to dry run first (an override the policy's reloads do
  // not lift), and say so.
  Override(v1::Policy::MODE_DRY_RUN, v1::MODE_SOURCE_RUNTIME, nullptr);
  LogInfo("restore requested", Because(request.reason()), " → mode ",
          ModeName(v1::Policy::MODE_DRY_RUN),
          " (runtime override), restoring everything from the journal");
  if (!hooks_.restore) return absl::UnimplementedError("no journal");
  ASSIGN_OR_RETURN(v1::RestoreResponse response, hooks_.restore());
  response.set_mode(v1::AGENT_MODE_DRY_RUN);
  response.set_mode_source(v1::MODE_SOURCE_RUNTIME);
  return response;
}

absl::StatusOr<v1::ProbeReport> DaemonController::Probe() {
  if (!hooks_.probe) return absl::UnimplementedError("no probe report");
  return hooks_.probe();
}

absl::StatusOr<v1::ExperimentReport> DaemonController::StartExperiment(
    const v1::StartExperimentRequest& request) {
  if (!hooks_.start_experiment)
    return absl::UnimplementedError("this agent runs no experiments");
  return hooks_.start_experiment(request, loop_->mode());
}

absl::StatusOr<v1::ExperimentReport> DaemonController::GetExperiment() {
  if (!hooks_.get_experiment)
    return absl::UnimplementedError("this agent runs no experiments");
  return hooks_.get_experiment();
}

absl::StatusOr<v1::ExperimentReport> DaemonController::StopExperiment(
    const v1::StopExperimentRequest& request) {
  if (!hooks_.stop_experiment)
    return absl::UnimplementedError("this agent runs no experiments");
  return hooks_.stop_experiment(request);
}

}  // namespace locus
