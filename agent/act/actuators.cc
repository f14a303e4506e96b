#include "agent/act/actuators.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace locus {

KernelOps MakeKernelOps(const ActuatorOptions& options) {
  KernelOps ops;
  ops.threads = MakeKernelThreadOps(options.procfs_root, options.cgroup_root,
                                    options.sysfs_root);
  ops.irqs = MakeProcIrqOps(options.procfs_root);
  ops.pages = MakeKernelPageOps(options.procfs_root);
  ops.clock = std::make_unique<MonotonicClock>();
  return ops;
}

absl::StatusOr<std::unique_ptr<Actuators>> Actuators::Create(
    const ActuatorOptions& options, KernelOps ops) {
  if (!ops.threads || !ops.irqs || !ops.pages || !ops.clock) {
    return absl::InvalidArgumentError("Actuators: missing kernel ops");
  }
  std::unique_ptr<Actuators> actuators(new Actuators());
  actuators->options_ = options;
  actuators->ops_ = std::move(ops);
  ASSIGN_OR_RETURN(actuators->journal_, Journal::Open(options.journal));
  actuators->Reset();
  return actuators;
}

void Actuators::Reset() {
  threads_ = std::make_unique<ThreadPlacer>(ops_.threads.get(), journal_.get(),
                                            options_.dry_run);
  irqs_ = std::make_unique<IrqSetter>(ops_.irqs.get(), journal_.get(),
                                      options_.dry_run);
  pages_ = std::make_unique<PageMigrator>(ops_.pages.get(), ops_.clock.get(),
                                          options_.migration, true);
  mover_.reset();  // its threads stop before the new one starts
  mover_ = std::make_unique<PageMover>(
      ops_.pages.get(), ops_.clock.get(),
      MoverOptions{.migration = options_.migration,
                   .threads = options_.page_movers});
}

ActionResult Actuators::Apply(const Action& action, bool dry_run) {
  dry_run = dry_run || options_.dry_run;
  if (const auto* pin = std::get_if<PinThread>(&action.op)) {
    return threads_->Apply(*pin, dry_run);
  }
  if (const auto* irq = std::get_if<SetIrqAffinity>(&action.op)) {
    return irqs_->Apply(*irq, dry_run);
  }
  const MigratePages& move = std::get<MigratePages>(action.op);
  // Moved pages are not journaled (they are not undone), but while the
  // journal cannot be written the agent changes nothing at all, so that an
  // operator who sees "not acting" can trust it.
  if (!dry_run && !journal_->last_error().ok()) {
    return MakeResult(
        Outcome::kRefused,
        absl::StrCat("pid ", move.pid, ": ", journal_->last_error().message()));
  }
  if (dry_run) return pages_->Apply(move, true);
  return mover_->Set(move);
}

void Actuators::StopPageMoves() { mover_->CancelAll(); }

absl::Status Actuators::Revert(const Action& action) {
  if (const auto* pin = std::get_if<PinThread>(&action.op)) {
    // Its memory was following the thread home: no longer.
    mover_->Cancel(pin->pid);
    return threads_->Revert(pin->tid);
  }
  if (const auto* irq = std::get_if<SetIrqAffinity>(&action.op)) {
    return irqs_->Revert(irq->irq);
  }
  mover_->Cancel(std::get<MigratePages>(action.op).pid);
  return absl::OkStatus();
}

std::vector<ExternalChange> Actuators::CheckExternalChanges() {
  std::vector<ExternalChange> changes = threads_->CheckExternalChanges();
  // A worker someone else moved is theirs: its memory stops following.
  for (const ExternalChange& change : changes) mover_->Cancel(change.pid);
  std::vector<ExternalChange> irq_changes = irqs_->CheckExternalChanges();
  changes.insert(changes.end(), irq_changes.begin(), irq_changes.end());
  return changes;
}

absl::StatusOr<RestoreReport> Actuators::RestoreAll(
    const SteeringRestoreOps* steering, const NeighbourRestoreOps* neighbours) {
  RestoreReport report = RestoreEntries(journal_->contents(), *ops_.threads,
                                        *ops_.irqs, steering, neighbours);
  report.journal = journal_->path();
  absl::Status status = ClearRestored(*journal_, report);
  // Forget placements (and back-offs: after a restore Locus starts afresh),
  // keeping what is known about managed IRQs.
  std::set<int> unmanageable = irqs_->unmanageable();
  Reset();
  for (int irq : unmanageable) irqs_->MarkUnmanageable(irq);
  if (!status.ok()) return status;
  return report;
}

}  // namespace locus
