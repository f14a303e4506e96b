// What happened when an actuator was asked to act: a value, never an
// exception or a crash. The loop logs it and puts it in the metrics stream.
#ifndef LOCUS_AGENT_ACT_RESULT_H_
#define LOCUS_AGENT_ACT_RESULT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace locus {

enum class Outcome {
  kApplied,       // the change was made
  kUnchanged,     // already as asked: nothing written, nothing journaled
  kDryRun,        // dry-run: the message says what would have been done
  kGone,          // thread/process/IRQ no longer exists (ESRCH, ENOENT)
  kForbidden,     // cpuset or kernel refuses the CPUs (EINVAL, EPERM)
  kUnmanageable,  // kernel-managed IRQ (EIO): never try again
  kBackedOff,     // someone else changed this entity after Locus did
  kRefused,       // the journal cannot be written, so nothing was changed
  kError,         // anything else; the message has the errno text
};

inline absl::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kApplied:
      return "applied";
    case Outcome::kUnchanged:
      return "unchanged";
    case Outcome::kDryRun:
      return "dry-run";
    case Outcome::kGone:
      return "gone";
    case Outcome::kForbidden:
      return "forbidden";
    case Outcome::kUnmanageable:
      return "unmanageable";
    case Outcome::kBackedOff:
      return "backed-off";
    case Outcome::kRefused:
      return "refused";
    case Outcome::kError:
      return "error";
  }
  return "?";
}

struct ActionResult {
  Outcome outcome = Outcome::kError;
  std::string message;  // what was (or would be) done, or why not
  // Page migration only.
  uint64_t pages_moved = 0;
  uint64_t bytes_moved = 0;
  // A whole pass over the process found no page to move: its memory is
  // where it was asked to be, as far as it can be moved.
  bool nothing_left = false;
  // IRQ only, when applied: the affinity the move replaced, read just
  // before writing (the snapshot the plan came from may be older).
  std::vector<int> cpus_before;
};

inline ActionResult MakeResult(Outcome outcome, std::string message) {
  return ActionResult{outcome, std::move(message), 0, 0, false, {}};
}

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_RESULT_H_
