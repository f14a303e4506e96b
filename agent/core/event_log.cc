#include "agent/core/event_log.h"

#include <type_traits>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"

namespace locus {
namespace {

LogEntry Entry(EventKind kind, LogLevel level, std::string message) {
  LogEntry entry;
  entry.level = level;
  entry.message = std::move(message);
  entry.message_id = std::string(MessageId(kind));
  return entry;
}

void AddNumber(LogEntry& entry, const char* name, int64_t value) {
  entry.fields.push_back(LogField{name, absl::StrCat(value), true});
}

void AddText(LogEntry& entry, const char* name, absl::string_view value) {
  entry.fields.push_back(LogField{name, std::string(value), false});
}

// LOCUS_ACTION and the entity's ids; LOCUS_NODE is where the action moves
// it, LOCUS_FROM_NODE where it was when known.
void AddAction(LogEntry& entry, const Action& action) {
  std::visit(
      [&](const auto& op) {
        using T = std::decay_t<decltype(op)>;
        if constexpr (std::is_same_v<T, PinThread>) {
          AddText(entry, "LOCUS_ACTION", "pin_thread");
          AddNumber(entry, "LOCUS_PID", op.pid);
          AddNumber(entry, "LOCUS_TID", op.tid);
          AddNumber(entry, "LOCUS_NODE", op.node);
        } else if constexpr (std::is_same_v<T, MigratePages>) {
          AddText(entry, "LOCUS_ACTION", "migrate_pages");
          AddNumber(entry, "LOCUS_PID", op.pid);
          AddNumber(entry, "LOCUS_NODE", op.to_node);
          if (op.from_node >= 0) {
            AddNumber(entry, "LOCUS_FROM_NODE", op.from_node);
          }
        } else {
          AddText(entry, "LOCUS_ACTION", "set_irq_affinity");
          AddNumber(entry, "LOCUS_IRQ", op.irq);
        }
      },
      action.op);
  if (!std::holds_alternative<MigratePages>(action.op) &&
      action.from_node >= 0) {
    AddNumber(entry, "LOCUS_FROM_NODE", action.from_node);
  }
}

}  // namespace

absl::string_view MessageId(EventKind kind) {
  switch (kind) {
    case EventKind::kAction:
      return "19aeed9b39db4387b771df33f55aa9e9";
    case EventKind::kRevert:
      return "8fdab55d47514b6981af4e7610cf0c5a";
    case EventKind::kExternalChange:
      return "3966c98b35654a77af06c6a02f2087c3";
    case EventKind::kRefusal:
      return "cf9be3c65a5b481c9480b1caca005f50";
    case EventKind::kExperimentStart:
      return "7e808f16718741d2b6366af7cbaad5c2";
    case EventKind::kExperimentStop:
      return "20479a4a54044a8085ba9a0ae4db18db";
    case EventKind::kExperimentVerdict:
      return "9669da4e170e463ba3803b9686a36b3b";
    case EventKind::kRestore:
      break;
  }
  return "a4a5be60e68b45be8c8a65328bd34eaf";
}

absl::string_view EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kAction:
      return "action";
    case EventKind::kRevert:
      return "revert";
    case EventKind::kExternalChange:
      return "external_change";
    case EventKind::kRefusal:
      return "refusal";
    case EventKind::kExperimentStart:
      return "experiment_start";
    case EventKind::kExperimentStop:
      return "experiment_stop";
    case EventKind::kExperimentVerdict:
      return "experiment_verdict";
    case EventKind::kRestore:
      break;
  }
  return "restore";
}

LogEntry ActionEntry(const Action& action, const ActionResult& result,
                     std::string message) {
  bool fine = result.outcome == Outcome::kApplied ||
              result.outcome == Outcome::kDryRun ||
              result.outcome == Outcome::kWaiting;
  LogEntry entry =
      Entry(EventKind::kAction, fine ? LogLevel::kInfo : LogLevel::kWarning,
            std::move(message));
  AddAction(entry, action);
  AddText(entry, "LOCUS_OUTCOME", OutcomeName(result.outcome));
  return entry;
}

LogEntry RevertEntry(const Action& action, const absl::Status& status,
                     std::string message) {
  LogEntry entry =
      Entry(EventKind::kRevert, LogLevel::kWarning, std::move(message));
  AddAction(entry, action);
  AddText(entry, "LOCUS_OUTCOME", status.ok() ? "reverted" : "revert-failed");
  return entry;
}

LogEntry ExternalChangeEntry(const ExternalEvent& event, std::string message) {
  LogEntry entry =
      Entry(EventKind::kExternalChange, LogLevel::kWarning, std::move(message));
  if (event.key.kind == EntityKind::kIrq) {
    AddNumber(entry, "LOCUS_IRQ", event.key.id);
  } else {
    AddNumber(entry, "LOCUS_PID", event.key.id);
    if (event.tid != 0) AddNumber(entry, "LOCUS_TID", event.tid);
  }
  AddText(entry, "LOCUS_OUTCOME", "backed-off");
  return entry;
}

LogEntry RefusalEntry(const RefusedProcess& process, std::string message) {
  LogEntry entry =
      Entry(EventKind::kRefusal, LogLevel::kWarning, std::move(message));
  AddNumber(entry, "LOCUS_PID", process.pid);
  AddText(entry, "LOCUS_COMM", process.comm);
  AddText(entry, "LOCUS_OUTCOME", "not-a-target");
  return entry;
}

LogEntry RefusalSummaryEntry(absl::string_view kind, uint64_t count,
                             std::string message) {
  LogEntry entry =
      Entry(EventKind::kRefusal, LogLevel::kWarning, std::move(message));
  AddNumber(entry, "LOCUS_COUNT", static_cast<int64_t>(count));
  AddText(entry, "LOCUS_REFUSAL_KIND", kind);
  AddText(entry, "LOCUS_OUTCOME", "not-a-target");
  return entry;
}

LogEntry RestoreEntry(bool failed, std::string message) {
  LogEntry entry =
      Entry(EventKind::kRestore, failed ? LogLevel::kError : LogLevel::kInfo,
            std::move(message));
  AddText(entry, "LOCUS_OUTCOME", failed ? "restore-failed" : "restored");
  return entry;
}

LogEntry ExperimentEntry(EventKind kind, const std::string& id,
                         absl::string_view outcome, std::string message) {
  const bool bad = outcome == "guardrail" || outcome == "harmful" ||
                   outcome == "aborted" || outcome == "interrupted";
  LogEntry entry = Entry(kind, bad ? LogLevel::kWarning : LogLevel::kInfo,
                         std::move(message));
  AddText(entry, "LOCUS_EXPERIMENT", id);
  AddText(entry, "LOCUS_OUTCOME", outcome);
  return entry;
}

}  // namespace locus
