// The agent's events as structured log entries: each kind has a fixed
// MESSAGE_ID (journalctl MESSAGE_ID=...) and LOCUS_* fields naming the
// thread, process, IRQ and node it is about, so that
// `journalctl MESSAGE_ID=<action> LOCUS_TID=1234` finds a thread's story.
// The IDs are part of the agent's interface (README "Logs"): never change
// one; a new kind gets a new one (`systemd-id128 new`).
#ifndef LOCUS_AGENT_CORE_EVENT_LOG_H_
#define LOCUS_AGENT_CORE_EVENT_LOG_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "agent/act/result.h"
#include "agent/core/ports.h"
#include "agent/core/verifier.h"
#include "common/log.h"
#include "policy/plan.h"
#include "policy/snapshot.h"

namespace locus {

enum class EventKind {
  kAction,          // an action tried, or planned in dry run: LOCUS_OUTCOME
  kRevert,          // an action undone because the objective got worse
  kExternalChange,  // someone else moved what Locus had set: backed off
  kRefusal,         // a process the selectors matched, refused as a target
  kRestore,         // one entity put back as it was (exit, locusctl restore)
  // The A/B experiment (LOCUS_EXPERIMENT names it): started with its arms,
  // ended (stopped, done, guardrail, interrupted), and its verdict.
  kExperimentStart,
  kExperimentStop,
  kExperimentVerdict,
};

// 32 lower-case hex digits.
absl::string_view MessageId(EventKind kind);
// "action", "revert", ...: the README's and the JSON lines' name for it.
absl::string_view EventKindName(EventKind kind);

// The entries; `message` is the text line a terminal shows.
LogEntry ActionEntry(const Action& action, const ActionResult& result,
                     std::string message);
LogEntry RevertEntry(const Action& action, const absl::Status& status,
                     std::string message);
LogEntry ExternalChangeEntry(const ExternalEvent& event, std::string message);
LogEntry RefusalEntry(const RefusedProcess& process, std::string message);
// Refusals of one kind (refusal_log.h) not logged one by one: LOCUS_COUNT
// of them, LOCUS_REFUSAL_KIND which.
LogEntry RefusalSummaryEntry(absl::string_view kind, uint64_t count,
                             std::string message);
LogEntry RestoreEntry(bool failed, std::string message);
// `kind` is one of the experiment's; `outcome` its LOCUS_OUTCOME ("started",
// "done", "guardrail", "significant", ...).
LogEntry ExperimentEntry(EventKind kind, const std::string& id,
                         absl::string_view outcome, std::string message);

}  // namespace locus

#endif  // LOCUS_AGENT_CORE_EVENT_LOG_H_
