#include "agent/act/irq_setter.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "agent/host/cpu_mask.h"

namespace locus {
ActionResult IrqSetter::Apply(const SetIrqAffinity& set, bool dry_run) {
  const std::string who = absl::StrCat("irq ", set.irq);
  if (unmanageable_.count(set.irq)) {
    return MakeResult(
        Outcome::kUnmanageable,
        absl::StrCat(who, ": kernel-managed, affinity cannot be set"));
  }
  if (backed_off_.count(set.irq)) {
    return MakeResult(Outcome::kBackedOff,
                      absl::StrCat(who,
                                   ": affinity changed by someone else, "
                                   "Locus leaves it alone"));
  }
  std::vector<int> target = set.cpus;
  std::sort(target.begin(), target.end());
  target.erase(std::unique(target.begin(), target.end()), target.end());
  if (target.empty()) {
    return MakeResult(Outcome::kError, absl::StrCat(who, ": no CPUs asked"));
  }
  std::vector<int> current;
  if (int err = ops_->ReadAffinity(set.irq, &current); err != 0) {
    return MakeResult(err == ENOENT ? Outcome::kGone : Outcome::kError,
                      absl::StrCat(who, ": ", std::strerror(err)));
  }
  const std::string change = absl::StrCat(
      who, ": cpus ", FormatCpuList(current), " -> ", FormatCpuList(target));
  if (current == target) {
    return MakeResult(
        Outcome::kUnchanged,
        absl::StrCat(who, ": already on cpus ", FormatCpuList(target)));
  }
  if (dry_run) {
    return MakeResult(Outcome::kDryRun, absl::StrCat("would move ", change));
  }
  if (absl::Status status = journal_->RecordIrq(IrqEntry{set.irq, current});
      !status.ok()) {
    return MakeResult(Outcome::kRefused,
                      absl::StrCat(who, ": ", status.message()));
  }
  int err = ops_->WriteAffinity(set.irq, target);
  if (err != 0) {
    if (!placed_.count(set.irq)) (void)journal_->ForgetIrq(set.irq);
    std::string message =
        absl::StrCat(who, ": write smp_affinity_list ", FormatCpuList(target),
                     ": ", std::strerror(err));
    switch (err) {
      case EIO:
      case EPERM:
        unmanageable_.insert(set.irq);
        return MakeResult(Outcome::kUnmanageable,
                          absl::StrCat(message, " (kernel-managed)"));
      case ENOENT:
        return MakeResult(Outcome::kGone, message);
      case EINVAL:
      case EACCES:
        return MakeResult(Outcome::kForbidden, message);
      default:
        return MakeResult(Outcome::kError, message);
    }
  }
  std::vector<int> now;
  if (ops_->ReadAffinity(set.irq, &now) != 0) now = target;
  placed_[set.irq] = now;
  ActionResult result =
      MakeResult(Outcome::kApplied, absl::StrCat("moved ", change));
  result.cpus_before = std::move(current);
  return result;
}

absl::Status IrqSetter::Revert(int irq) {
  placed_.erase(irq);
  auto entry = journal_->contents().irqs.find(irq);
  if (entry == journal_->contents().irqs.end()) return absl::OkStatus();
  const std::vector<int> original = entry->second.cpus;
  int err = ops_->WriteAffinity(irq, original);
  if (err != 0 && err != ENOENT) {
    return absl::FailedPreconditionError(
        absl::StrCat("irq ", irq, ": restoring cpus ", FormatCpuList(original),
                     ": ", std::strerror(err)));
  }
  return journal_->ForgetIrq(irq);
}

std::vector<ExternalChange> IrqSetter::CheckExternalChanges() {
  std::vector<ExternalChange> changes;
  for (auto it = placed_.begin(); it != placed_.end();) {
    const int irq = it->first;
    std::vector<int> now;
    if (ops_->ReadAffinity(irq, &now) != 0) {
      (void)journal_->ForgetIrq(irq);  // gone
      it = placed_.erase(it);
      continue;
    }
    if (now != it->second) {
      ExternalChange change;
      change.kind = ExternalChange::Kind::kIrq;
      change.id = irq;
      change.expected = it->second;
      change.actual = now;
      change.message = absl::StrCat(
          "irq ", irq, ": affinity is ", FormatCpuList(now), ", Locus set ",
          FormatCpuList(it->second), ": someone else moved it, backing off");
      changes.push_back(std::move(change));
      (void)journal_->ForgetIrq(irq);
      backed_off_.insert(irq);
      it = placed_.erase(it);
      continue;
    }
    ++it;
  }
  return changes;
}

}  // namespace locus
