#include "agent/act/thread_placer.h"

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/host/cpu_mask.h"
#include "common/os_error.h"

namespace locus {
namespace {

std::string Who(const PinThread& pin) {
  return absl::StrCat("thread ", pin.tid, " (pid ", pin.pid, ")");
}

}  // namespace

ActionResult ThreadPlacer::Apply(const PinThread& pin, bool dry_run) {
  const std::string who = Who(pin);
  if (backed_off_.count(pin.tid)) return BackedOffResult(who);
  const std::vector<int> wanted = SortedCpus(pin.cpus);
  if (wanted.empty()) {
    return MakeResult(Outcome::kError, absl::StrCat(who, ": no CPUs asked"));
  }
  uint64_t start_time = 0;
  if (int err = ops_->StartTime(pin.tid, &start_time); err != 0) {
    return ResultOfErrno(err, who, kTaskErrnos);
  }
  ForgetIfRecycled(pin.tid, start_time);
  std::vector<int> cpuset;
  if (int err = ops_->CpusetCpus(pin.tid, &cpuset); err != 0) {
    return ResultOfErrno(err, absl::StrCat(who, ": cpuset"), kTaskErrnos);
  }
  const std::vector<int> target = IntersectCpus(wanted, cpuset);
  if (target.empty()) {
    return MakeResult(
        Outcome::kForbidden,
        absl::StrCat(who, ": cpuset allows ", FormatCpuList(cpuset),
                     ", none of ", FormatCpuList(wanted)));
  }
  std::vector<int> current;
  if (int err = ops_->GetAffinity(pin.tid, &current); err != 0) {
    return ResultOfErrno(err, absl::StrCat(who, ": sched_getaffinity"),
                         kTaskErrnos);
  }
  if (auto placed = placed_.find(pin.tid);
      placed != placed_.end() && current != placed->second.cpus) {
    // Changed by someone else since Locus set it, and not yet checked.
    noticed_.push_back(BackOff(placed, current));
    return MakeResult(Outcome::kBackedOff, noticed_.back().message);
  }
  const std::string change = absl::StrCat(
      who, ": cpus ", FormatCpuList(current), " -> ", FormatCpuList(target),
      target != wanted ? " (cpuset-limited)" : "");
  if (current == target) return UnchangedResult(who, target);
  if (dry_run) {
    return MakeResult(Outcome::kDryRun, absl::StrCat("would pin ", change));
  }
  return Pin(pin, ThreadEntry{pin.pid, pin.tid, start_time, current}, target,
             change);
}

void ThreadPlacer::ForgetIfRecycled(int32_t tid, uint64_t start_time) {
  auto placed = placed_.find(tid);
  if (placed != placed_.end() && placed->second.start_time != start_time) {
    // The TID was recycled: the thread Locus placed is gone.
    placed_.erase(placed);
    (void)journal_->ForgetThread(tid);
  }
}

ActionResult ThreadPlacer::Pin(const PinThread& pin, const ThreadEntry& entry,
                               const std::vector<int>& target,
                               const std::string& change) {
  const std::string who = Who(pin);
  if (absl::Status status = journal_->RecordThread(entry); !status.ok()) {
    return MakeResult(Outcome::kRefused,
                      absl::StrCat(who, ": ", status.message()));
  }
  if (int err = ops_->SetAffinity(pin.tid, target); err != 0) {
    // Nothing changed: the entry is only kept if an earlier change needs it.
    if (!placed_.count(pin.tid)) (void)journal_->ForgetThread(pin.tid);
    return ResultOfErrno(
        err,
        absl::StrCat(who, ": sched_setaffinity(", FormatCpuList(target), ")"),
        kSetAffinityErrnos);
  }
  // Read back: the kernel may narrow the mask (cpuset changed meanwhile); what
  // it holds now is what later ticks compare against.
  std::vector<int> now;
  if (ops_->GetAffinity(pin.tid, &now) != 0) now = target;
  placed_[pin.tid] = Placed{pin.pid, entry.start_time, now};
  return MakeResult(Outcome::kApplied, absl::StrCat("pinned ", change));
}

absl::Status ThreadPlacer::Revert(int32_t tid) {
  placed_.erase(tid);
  auto entry = journal_->contents().threads.find(tid);
  if (entry == journal_->contents().threads.end()) return absl::OkStatus();
  const ThreadEntry original = entry->second;
  uint64_t start_time = 0;
  int err = ops_->StartTime(tid, &start_time);
  if (err == 0 && start_time == original.start_time) {
    err = ops_->SetAffinity(tid, original.cpus);
  } else if (err == 0) {
    err = ESRCH;  // TID recycled: the thread Locus moved is gone
  }
  if (err != 0 && err != ESRCH) {
    return absl::FailedPreconditionError(
        ErrnoMessage(absl::StrCat("thread ", tid, ": restoring cpus ",
                                  FormatCpuList(original.cpus)),
                     err));
  }
  return journal_->ForgetThread(tid);
}

ExternalChange ThreadPlacer::BackOff(std::map<int32_t, Placed>::iterator placed,
                                     std::vector<int> now) {
  const int32_t tid = placed->first;
  const int32_t pid = placed->second.pid;
  std::string message =
      BackOffMessage(absl::StrCat("thread ", tid, " (pid ", pid, ")"),
                     placed->second.cpus, now);
  ExternalChange change{.kind = ExternalChange::Kind::kThread,
                        .id = tid,
                        .pid = pid,
                        .expected = placed->second.cpus,
                        .actual = std::move(now),
                        .message = std::move(message)};
  (void)journal_->ForgetThread(tid);
  backed_off_.insert(tid);
  placed_.erase(placed);
  return change;
}

std::vector<ExternalChange> ThreadPlacer::CheckExternalChanges() {
  std::vector<ExternalChange> changes = std::exchange(noticed_, {});
  // The affinity is read at each visit (one syscall), the start time (a
  // stat file) only when the affinity differs or every kIdentityEvery
  // visits. A reused tid that kept Locus's CPUs is thus dropped late,
  // harmlessly: restore and revert check the start time themselves.
  constexpr uint32_t kIdentityEvery = 2;
  const size_t budget = std::min(
      placed_.size(), std::max(kCheckAtOnce, (placed_.size() + 4) / 5));
  std::vector<int32_t> due;  // in turn, from where the last call stopped
  auto it = placed_.lower_bound(next_check_);
  while (due.size() < budget) {
    if (it == placed_.end()) it = placed_.begin();
    due.push_back((it++)->first);
  }
  next_check_ = it == placed_.end() ? 0 : it->first;
  for (int32_t tid : due) {
    auto placed = placed_.find(tid);
    uint64_t start_time = 0;
    std::vector<int> now;
    bool gone = ops_->GetAffinity(tid, &now) != 0;
    if (!gone && (now != placed->second.cpus ||
                  ++placed->second.checks % kIdentityEvery == 0)) {
      gone = ops_->StartTime(tid, &start_time) != 0 ||
             start_time != placed->second.start_time;
    }
    if (gone) {
      (void)journal_->ForgetThread(tid);  // nothing left to restore
      placed_.erase(placed);
    } else if (now != placed->second.cpus) {
      changes.push_back(BackOff(placed, std::move(now)));
    }
  }
  return changes;
}

}  // namespace locus
