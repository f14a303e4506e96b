#include "agent/act/irq_setter.h"

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/host/cpu_mask.h"
#include "common/os_error.h"

namespace locus {

ActionResult IrqSetter::Apply(const SetIrqAffinity& set, bool dry_run) {
  const std::string who = absl::StrCat("irq ", set.irq);
  if (unmanageable_.count(set.irq)) {
    return MakeResult(
        Outcome::kUnmanageable,
        absl::StrCat(who, ": kernel-managed, affinity cannot be set"));
  }
  if (backed_off_.count(set.irq)) return BackedOffResult(who);
  const std::vector<int> target = SortedCpus(set.cpus);
  if (target.empty()) {
    return MakeResult(Outcome::kError, absl::StrCat(who, ": no CPUs asked"));
  }
  std::vector<int> current;
  if (int err = ops_->ReadAffinity(set.irq, &current); err != 0) {
    return ResultOfErrno(err, who, kIrqReadErrnos);
  }
  const std::string change = absl::StrCat(
      who, ": cpus ", FormatCpuList(current), " -> ", FormatCpuList(target));
  if (current == target) return UnchangedResult(who, target);
  if (dry_run) {
    return MakeResult(Outcome::kDryRun, absl::StrCat("would move ", change));
  }
  return Move(IrqEntry{set.irq, std::move(current)}, target, change);
}

ActionResult IrqSetter::Move(IrqEntry entry, const std::vector<int>& target,
                             const std::string& change) {
  const int irq = entry.irq;
  const std::string who = absl::StrCat("irq ", irq);
  if (absl::Status status = journal_->RecordIrq(entry); !status.ok()) {
    return MakeResult(Outcome::kRefused,
                      absl::StrCat(who, ": ", status.message()));
  }
  if (int err = ops_->WriteAffinity(irq, target); err != 0) {
    if (!placed_.count(irq)) (void)journal_->ForgetIrq(irq);
    ActionResult result = ResultOfErrno(
        err,
        absl::StrCat(who, ": write smp_affinity_list ", FormatCpuList(target)),
        kIrqWriteErrnos);
    if (result.outcome == Outcome::kUnmanageable) {
      unmanageable_.insert(irq);
      absl::StrAppend(&result.message, " (kernel-managed)");
    }
    return result;
  }
  std::vector<int> now;
  if (ops_->ReadAffinity(irq, &now) != 0) now = target;
  placed_[irq] = now;
  ActionResult result =
      MakeResult(Outcome::kApplied, absl::StrCat("moved ", change));
  result.cpus_before = std::move(entry.cpus);
  return result;
}

absl::Status IrqSetter::Revert(int irq) {
  placed_.erase(irq);
  auto entry = journal_->contents().irqs.find(irq);
  if (entry == journal_->contents().irqs.end()) return absl::OkStatus();
  const std::vector<int> original = entry->second.cpus;
  int err = ops_->WriteAffinity(irq, original);
  if (err != 0 && err != ENOENT) {
    return absl::FailedPreconditionError(ErrnoMessage(
        absl::StrCat("irq ", irq, ": restoring cpus ", FormatCpuList(original)),
        err));
  }
  return journal_->ForgetIrq(irq);
}

std::vector<ExternalChange> IrqSetter::CheckExternalChanges() {
  std::vector<ExternalChange> changes;
  for (auto it = placed_.begin(); it != placed_.end();) {
    const int irq = it->first;
    std::vector<int> now;
    if (int err = ops_->ReadAffinity(irq, &now); err == ENOENT) {
      (void)journal_->ForgetIrq(irq);  // gone
      it = placed_.erase(it);
      continue;
    } else if (err != 0) {
      ++it;  // unreadable for now (a move completing): looked at next tick
      continue;
    }
    if (now != it->second) {
      ExternalChange change{.kind = ExternalChange::Kind::kIrq,
                            .id = irq,
                            .expected = it->second,
                            .actual = now,
                            .message = BackOffMessage(absl::StrCat("irq ", irq),
                                                      it->second, now)};
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
