#include "agent/daemon/executor.h"

#include "absl/strings/str_join.h"
#include "agent/core/event_log.h"
#include "common/log.h"
#include "common/status_macros.h"

namespace locus {

ActionResult ActuatorExecutor::Apply(const Action& action, bool dry_run) {
  absl::MutexLock lock(&mu_);
  return actuators_->Apply(action, dry_run);
}

absl::Status ActuatorExecutor::Revert(const Action& action) {
  absl::MutexLock lock(&mu_);
  return actuators_->Revert(action);
}

std::vector<ExternalEvent> ActuatorExecutor::TakeExternalChanges() {
  absl::MutexLock lock(&mu_);
  std::vector<ExternalEvent> events;
  for (const ExternalChange& change : actuators_->CheckExternalChanges()) {
    bool irq = change.kind == ExternalChange::Kind::kIrq;
    events.push_back(
        ExternalEvent{EntityKey{irq ? EntityKind::kIrq : EntityKind::kTask,
                                irq ? change.id : change.pid},
                      change.message, irq ? 0 : change.id});
  }
  return events;
}

absl::StatusOr<RestoreReport> ActuatorExecutor::RestoreAllWithReport() {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<RestoreReport> report = actuators_->RestoreAll();
  if (report.ok()) {
    for (const std::string& line : report->messages) {
      Log(RestoreEntry(false, line));
    }
    for (const std::string& line : report->errors)
      Log(RestoreEntry(true, line));
  }
  return report;
}

absl::Status ActuatorExecutor::RestoreAll() {
  ASSIGN_OR_RETURN(RestoreReport report, RestoreAllWithReport());
  if (!report.ok()) {
    return absl::InternalError(absl::StrJoin(report.errors, "; "));
  }
  return absl::OkStatus();
}

uint32_t ActuatorExecutor::journal_entries() {
  absl::MutexLock lock(&mu_);
  const JournalContents& contents = actuators_->journal().contents();
  return contents.threads.size() + contents.irqs.size();
}

std::string ActuatorExecutor::journal_error() {
  absl::MutexLock lock(&mu_);
  return std::string(actuators_->journal().last_error().message());
}

std::set<int> ActuatorExecutor::unmanageable_irqs() {
  absl::MutexLock lock(&mu_);
  return actuators_->unmanageable_irqs();
}

}  // namespace locus
