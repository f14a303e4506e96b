// The actuators the control loop drives: one journal shared by the thread
// placer and the IRQ setter (so one restore undoes both), plus the page
// mover (its own threads; a dry run estimates with the page migrator on the
// calling thread). This is what locusd owns.
#ifndef LOCUS_AGENT_ACT_ACTUATORS_H_
#define LOCUS_AGENT_ACT_ACTUATORS_H_

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/act/irq_setter.h"
#include "agent/act/kernel_ops.h"
#include "agent/act/memory/page_migrator.h"
#include "agent/act/memory/page_mover.h"
#include "agent/act/restore.h"
#include "agent/act/result.h"
#include "agent/act/thread_placer.h"
#include "agent/journal/journal.h"
#include "common/clock.h"
#include "common/defaults.h"
#include "policy/plan.h"

namespace locus {

struct ActuatorOptions {
  JournalOptions journal;
  bool dry_run = false;  // report what would be done, change nothing
  MigrationOptions migration;
  int page_movers = 2;  // threads moving pages (DefaultPageMovers)
  std::string procfs_root = kDefaultProcfsRoot;
  std::string sysfs_root = kDefaultSysfsRoot;
  std::string cgroup_root = "/sys/fs/cgroup";
};

struct KernelOps {
  std::unique_ptr<ThreadOps> threads;
  std::unique_ptr<IrqOps> irqs;
  std::unique_ptr<PageOps> pages;
  std::unique_ptr<Clock> clock;  // times the page movers' budgets
};

// The real kernel, through the roots in `options`.
KernelOps MakeKernelOps(const ActuatorOptions& options);

class Actuators {
 public:
  // Loads any journal a crashed run left (RestoreAll undoes it too). The
  // daemon should RestoreJournal() before this at start, so the left-over
  // entries are restored before anything else happens.
  static absl::StatusOr<std::unique_ptr<Actuators>> Create(
      const ActuatorOptions& options, KernelOps ops);

  // Dry-run when options.dry_run or `dry_run` (the policy's mode per tick).
  ActionResult Apply(const Action& action) { return Apply(action, false); }
  ActionResult Apply(const Action& action, bool dry_run);

  // Undoes one applied action from the journal (the closed loop found it
  // made things worse): the thread or IRQ gets its original mask back and
  // its entry is forgotten. A reverted pin or migration also cancels the
  // process's queued page moves; pages already moved stay (no per-page
  // journal; moving them back is a new decision).
  absl::Status Revert(const Action& action);
  // Drops every queued page move: each dry-run tick calls it, so that what
  // an enforcing tick queued stops; the call under way ends.
  void StopPageMoves();

  // Call once per tick: threads/IRQs someone else moved after Locus did
  // (now backed off, journal entries forgotten, their process's page moves
  // cancelled). Gone ones are dropped.
  std::vector<ExternalChange> CheckExternalChanges();

  // Restores every journaled entity, clears the journal and forgets all
  // placements: SIGTERM/SIGINT path. Steering records are detached through
  // `steering` (see RestoreEntries).
  absl::StatusOr<RestoreReport> RestoreAll(
      const SteeringRestoreOps* steering = nullptr,
      const NeighbourRestoreOps* neighbours = nullptr);

  const std::set<int>& unmanageable_irqs() const {
    return irqs_->unmanageable();
  }
  const Journal& journal() const { return *journal_; }
  // For connection steering, which journals its attaches in the same file.
  Journal* mutable_journal() { return journal_.get(); }

 private:
  Actuators() = default;
  void Reset();

  ActuatorOptions options_;
  KernelOps ops_;
  std::unique_ptr<Journal> journal_;
  std::unique_ptr<ThreadPlacer> threads_;
  std::unique_ptr<IrqSetter> irqs_;
  std::unique_ptr<PageMigrator> pages_;  // dry-run estimates
  std::unique_ptr<PageMover> mover_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_ACTUATORS_H_
