#include "agent/daemon/restore_mode.h"

#include "agent/act/actuators.h"
#include "agent/act/connections/reuseport_kernel.h"
#include "agent/act/connections/reuseport_restore.h"
#include "agent/act/neighbours/neighbours.h"
#include "agent/act/restore.h"
#include "agent/core/event_log.h"
#include "common/log.h"
#include "common/printable.h"

namespace locus {
namespace {

// Every restore is logged, with what it found wrong in the journal.
void LogRestore(const RestoreReport& report) {
  for (const std::string& line : report.messages) {
    Log(RestoreEntry(false, line));
  }
  for (const std::string& line : report.errors) Log(RestoreEntry(true, line));
  LogInfo("restored from ", Printable(report.journal), ": ",
          report.threads_restored, " thread(s), ", report.irqs_restored,
          " IRQ(s) and ", report.groups_detached, " steered group(s); ",
          report.dropped, " no longer exist",
          report.truncated_tail ? "; the journal's last record was torn" : "");
  if (const std::string kept = KeptRecordsLine(report); !kept.empty()) {
    LogWarning(kept);
  }
  if (report.corrupt_records > 0 || report.truncated_tail) {
    LogWarning(
        Printable(report.journal), " had ", report.corrupt_records,
        " damaged record(s)",
        report.truncated_tail ? " and a torn last record" : "",
        ", not restored; the journal is kept as ",
        report.kept_copy.empty() ? "(gone)" : Printable(report.kept_copy),
        " to recover them by hand");
  }
}

}  // namespace

absl::StatusOr<std::optional<InstanceLock>> LockJournal(
    const std::string& journal_path) {
  absl::StatusOr<InstanceLock> lock = InstanceLock::Acquire(journal_path);
  if (lock.ok()) return std::optional<InstanceLock>(*std::move(lock));
  if (absl::IsFailedPrecondition(lock.status())) return lock.status();
  LogWarning("no instance lock (", lock.status().message(),
             "); the journal is not writable either, so nothing will be "
             "changed");
  return std::optional<InstanceLock>();
}

bool RestoreJournalAt(const std::string& journal_path,
                      const std::string& sysfs_root,
                      const std::string& procfs_root) {
  ActuatorOptions options;
  options.journal.path = journal_path;
  options.sysfs_root = sysfs_root;
  options.procfs_root = procfs_root;
  KernelOps ops = MakeKernelOps(options);
  // Detaching needs pidfd_getfd and the socket option only, no BPF load.
  std::unique_ptr<ReuseportOps> reuseport = MakeKernelReuseportOps();
  std::unique_ptr<ListenerFinder> finder = MakeProcListenerFinder(procfs_root);
  const SteeringRestoreOps steering{reuseport.get(), finder.get()};
  NeighbourOps neighbour_ops = MakeNeighbourOps(procfs_root);
  const NeighbourRestoreOps neighbours{neighbour_ops.irqbalance.get(),
                                       neighbour_ops.numad.get()};
  absl::StatusOr<RestoreReport> report = RestoreJournal(
      options.journal, *ops.threads, *ops.irqs, &steering, &neighbours);
  if (!report.ok()) {
    LogError("restore from ", journal_path, ": ", report.status().message());
    return false;
  }
  LogRestore(*report);
  return report->ok();
}

int RunRestore(const std::string& journal_path, const std::string& sysfs_root,
               const std::string& procfs_root) {
  absl::StatusOr<std::optional<InstanceLock>> lock = LockJournal(journal_path);
  if (!lock.ok()) {
    LogError(lock.status().message());
    return 1;
  }
  return RestoreJournalAt(journal_path, sysfs_root, procfs_root) ? 0 : 1;
}

}  // namespace locus
