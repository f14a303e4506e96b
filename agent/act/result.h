// What happened when an actuator was asked to act: a value, never an
// exception or a crash. The loop logs it and puts it in the metrics stream.
#ifndef LOCUS_AGENT_ACT_RESULT_H_
#define LOCUS_AGENT_ACT_RESULT_H_

#include <cerrno>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/os_error.h"
#include "policy/cpu_list.h"

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
  kWaiting,       // a neighbour must let go of it first (irqbalance's ban)
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
    case Outcome::kWaiting:
      return "waiting";
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

// An entity someone else moved after Locus did is left alone for good.
inline ActionResult BackedOffResult(absl::string_view who) {
  return MakeResult(Outcome::kBackedOff,
                    absl::StrCat(who,
                                 ": affinity changed by someone else, "
                                 "Locus leaves it alone"));
}

// Already on the CPUs asked: nothing written, nothing journaled.
inline ActionResult UnchangedResult(absl::string_view who,
                                    const std::vector<int>& cpus) {
  return MakeResult(Outcome::kUnchanged, absl::StrCat(who, ": already on cpus ",
                                                      FormatCpuList(cpus)));
}

// What an errno means for one kind of kernel call. The same errno says
// different things to different calls (EPERM: the cpuset refuses a thread's
// CPUs, the kernel manages an IRQ, the process is not Locus's to touch), so
// each call names its table below; an errno no entry names is kError.
struct ErrnoOutcome {
  int err;
  Outcome outcome;
};
using ErrnoOutcomes = std::span<const ErrnoOutcome>;

// Reading a task (start time, cpuset, affinity, /proc/PID/maps) or moving
// its pages: ESRCH, it exited.
inline constexpr ErrnoOutcome kTaskErrnos[] = {{ESRCH, Outcome::kGone}};
// move_pages to a node: EACCES, the node is outside the task's cpuset.mems.
inline constexpr ErrnoOutcome kMoveErrnos[] = {{ESRCH, Outcome::kGone},
                                               {EACCES, Outcome::kForbidden}};
// sched_setaffinity: EINVAL (no CPU of the mask in the cpuset) and EPERM
// refuse the CPUs.
inline constexpr ErrnoOutcome kSetAffinityErrnos[] = {
    {ESRCH, Outcome::kGone},
    {EINVAL, Outcome::kForbidden},
    {EPERM, Outcome::kForbidden}};
// Querying where a process's pages are: EPERM, the process is not Locus's to
// move (another user's, without CAP_SYS_NICE).
inline constexpr ErrnoOutcome kPageQueryErrnos[] = {
    {ESRCH, Outcome::kGone}, {EPERM, Outcome::kForbidden}};
// Reading /proc/irq/N/smp_affinity_list: ENOENT, the IRQ went.
inline constexpr ErrnoOutcome kIrqReadErrnos[] = {{ENOENT, Outcome::kGone}};
// Writing it: EIO (up to 6.x) or EPERM (6.18) when the kernel manages the
// IRQ's affinity (root owns the file, so EPERM is not a permission problem);
// EINVAL or EACCES refuse the CPUs.
inline constexpr ErrnoOutcome kIrqWriteErrnos[] = {
    {EIO, Outcome::kUnmanageable},
    {EPERM, Outcome::kUnmanageable},
    {ENOENT, Outcome::kGone},
    {EINVAL, Outcome::kForbidden},
    {EACCES, Outcome::kForbidden}};

inline Outcome OutcomeOfErrno(int err, ErrnoOutcomes outcomes) {
  for (const ErrnoOutcome& entry : outcomes) {
    if (entry.err == err) return entry.outcome;
  }
  return Outcome::kError;
}

// The result of a call that failed with `err`, saying "what: strerror".
inline ActionResult ResultOfErrno(int err, absl::string_view what,
                                  ErrnoOutcomes outcomes) {
  return MakeResult(OutcomeOfErrno(err, outcomes), ErrnoMessage(what, err));
}

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_RESULT_H_
