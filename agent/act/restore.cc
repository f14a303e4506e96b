#include "agent/act/restore.h"

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "agent/act/connections/connection_steering.h"
#include "agent/act/connections/reuseport_restore.h"
#include "agent/act/connections/steering_journal.h"
#include "agent/act/neighbours/irqbalance_socket.h"
#include "agent/act/neighbours/neighbours.h"
#include "agent/act/neighbours/numad_queue.h"
#include "agent/host/cpu_mask.h"
#include "common/os_error.h"
#include "common/printable.h"
#include "common/status_macros.h"

namespace locus {
namespace {

void RestoreThread(const ThreadEntry& entry, ThreadOps& threads,
                   RestoreReport* report) {
  const int32_t tid = entry.tid;
  const std::string who =
      absl::StrCat("thread ", tid, " (pid ", entry.pid, ")");
  uint64_t start_time = 0;
  int err = threads.StartTime(tid, &start_time);
  if (err == ESRCH || (err == 0 && start_time != entry.start_time)) {
    ++report->dropped;
    report->messages.push_back(absl::StrCat(
        who, ": gone", err == 0 ? " (tid reused)" : "", ", dropped"));
    return;
  }
  if (err != 0) {
    report->errors.push_back(ErrnoMessage(who, err));
    return;
  }
  std::vector<int> cpus = entry.cpus;
  err = threads.SetAffinity(tid, cpus);
  if (err == EINVAL) {
    // None of the original CPUs is allowed any more (cpuset changed or
    // CPUs offlined): the widest mask the cpuset allows is the nearest.
    if (threads.CpusetCpus(tid, &cpus) == 0 && !cpus.empty()) {
      err = threads.SetAffinity(tid, cpus);
    }
  }
  if (err == ESRCH) {
    ++report->dropped;
    report->messages.push_back(absl::StrCat(who, ": gone, dropped"));
  } else if (err != 0) {
    report->errors.push_back(ErrnoMessage(
        absl::StrCat(who, ": sched_setaffinity(", FormatCpuList(cpus), ")"),
        err));
  } else {
    ++report->threads_restored;
    report->messages.push_back(
        absl::StrCat(who, ": restored cpus ", FormatCpuList(cpus)));
  }
}

void RestoreIrq(const IrqEntry& entry, IrqOps& irqs, RestoreReport* report) {
  const std::string who = absl::StrCat("irq ", entry.irq);
  int err = irqs.WriteAffinity(entry.irq, entry.cpus);
  if (err == ENOENT) {
    ++report->dropped;
    report->messages.push_back(absl::StrCat(who, ": gone, dropped"));
  } else if (err != 0) {
    report->errors.push_back(
        ErrnoMessage(absl::StrCat(who, ": write smp_affinity_list ",
                                  FormatCpuList(entry.cpus)),
                     err));
  } else {
    ++report->irqs_restored;
    report->messages.push_back(
        absl::StrCat(who, ": restored cpus ", FormatCpuList(entry.cpus)));
  }
}

// Detaches through the first member that is still there.
absl::Status DetachGroup(ReuseportOps& ops, const ListenKey& key,
                         const std::vector<GroupSocket>& members) {
  absl::Status status = absl::NotFoundError("no member");
  for (const GroupSocket& member : members) {
    status = DetachReuseportGroup(ops, key, member);
    if (!absl::IsNotFound(status)) return status;
  }
  return status;
}

void RestoreSteering(const std::set<ListenKey>& steered,
                     const SteeringRestoreOps* steering,
                     RestoreReport* report) {
  if (steered.empty()) return;
  if (steering == nullptr) {
    for (const ListenKey& key : steered) {
      report->errors.push_back(
          absl::StrCat(ListenKeyString(key),
                       ": steering program not detached (run "
                       "`locusd --restore`, or restart nginx)"));
    }
    return;
  }
  std::vector<std::string> scan_errors;
  absl::StatusOr<FoundGroups> found =
      steering->finder->Find(steered, &scan_errors);
  for (const std::string& error : scan_errors) {
    report->messages.push_back(absl::StrCat("looking for groups: ", error));
  }
  for (const ListenKey& key : steered) {
    const std::string who = ListenKeyString(key);
    absl::Status status = found.status();
    if (found.ok()) {
      auto group = found->find(key);
      status = group == found->end()
                   ? absl::NotFoundError("gone")
                   : DetachGroup(*steering->ops, key, group->second);
    }
    if (absl::IsNotFound(status)) {
      ++report->dropped;
      report->messages.push_back(
          absl::StrCat(who, ": group gone (its program with it), dropped"));
    } else if (!status.ok()) {
      report->errors.push_back(
          absl::StrCat(who, ": not detached: ", status.message()));
    } else {
      ++report->groups_detached;
      report->messages.push_back(
          absl::StrCat(who, ": steering program detached"));
    }
  }
}

// Hands back what Locus gave irqbalance and numad, through the host's own
// when the caller has none.
void RestoreNeighbours(const JournalContents& contents,
                       const NeighbourRestoreOps* given,
                       RestoreReport* report) {
  if (contents.irqbalance_bans.empty() && contents.numad_exclusions.empty()) {
    return;
  }
  NeighbourRestoreOps ops = given != nullptr ? *given : NeighbourRestoreOps{};
  NeighbourOps own;
  if (ops.irqbalance == nullptr) {
    own.irqbalance = MakeIrqbalanceSocketOps();
    ops.irqbalance = own.irqbalance.get();
  }
  if (ops.numad == nullptr) {
    own.numad = MakeNumadQueueOps();
    ops.numad = own.numad.get();
  }
  RestoreIrqbalanceBans(contents.irqbalance_bans, *ops.irqbalance, ops.timeout,
                        &report->messages, &report->errors, &report->kept_bans);
  RestoreNumadExclusions(contents.numad_exclusions, *ops.numad,
                         &report->messages, &report->errors,
                         &report->kept_exclusions);
}

}  // namespace

std::string KeptRecordsLine(const RestoreReport& report) {
  if (report.kept() == 0) return "";
  return absl::StrCat(
      "partial restore: ", report.kept_bans.size(), " irqbalance ban(s) and ",
      report.kept_exclusions.size(), " numad exclusion(s) kept in ",
      report.journal.empty() ? "the journal" : Printable(report.journal),
      " for later: given back by the running agent, the next start or "
      "`locusd --restore` once irqbalance and numad answer");
}

absl::Status ClearRestored(Journal& journal, const RestoreReport& report) {
  if (report.kept() == 0) return journal.Clear();
  if (journal.contents().dropped_content()) {
    // Nothing goes after a damaged tail (a record would be glued to it and
    // lost): the file is set aside whole, and the kept records written anew.
    RETURN_IF_ERROR(journal.Clear());
    for (const auto& [irq, irqbalance] : report.kept_bans) {
      RETURN_IF_ERROR(journal.RecordIrqbalanceBan(irqbalance, irq));
    }
    for (const auto& [pid, numad] : report.kept_exclusions) {
      RETURN_IF_ERROR(journal.RecordNumadExclusion(numad, pid));
    }
    return absl::OkStatus();
  }
  // A copy: each forget record edits the contents.
  const JournalContents contents = journal.contents();
  for (const auto& [tid, entry] : contents.threads) {
    RETURN_IF_ERROR(journal.ForgetThread(tid));
  }
  for (const auto& [irq, entry] : contents.irqs) {
    RETURN_IF_ERROR(journal.ForgetIrq(irq));
  }
  for (const ListenKey& group : contents.steered) {
    RETURN_IF_ERROR(journal.ForgetSteered(group));
  }
  RETURN_IF_ERROR(journal.ForgetIrqbalanceBansWhere(
      [&](int32_t irq, int32_t) { return !report.kept_bans.count(irq); }));
  return journal.ForgetNumadExclusionsWhere(
      [&](int32_t pid, int32_t) { return !report.kept_exclusions.count(pid); });
}

RestoreReport RestoreEntries(const JournalContents& contents,
                             ThreadOps& threads, IrqOps& irqs,
                             const SteeringRestoreOps* steering,
                             const NeighbourRestoreOps* neighbours) {
  RestoreReport report;
  report.corrupt_records = contents.corrupt_records;
  report.truncated_tail = contents.truncated_tail;
  for (const std::string& problem : contents.problems) {
    report.messages.push_back(problem);
  }
  for (const auto& [tid, entry] : contents.threads) {
    RestoreThread(entry, threads, &report);
  }
  for (const auto& [irq, entry] : contents.irqs) {
    RestoreIrq(entry, irqs, &report);
  }
  RestoreSteering(contents.steered, steering, &report);
  RestoreNeighbours(contents, neighbours, &report);
  return report;
}

absl::StatusOr<RestoreReport> RestoreJournal(
    const JournalOptions& options, ThreadOps& threads, IrqOps& irqs,
    const SteeringRestoreOps* steering, const NeighbourRestoreOps* neighbours) {
  ASSIGN_OR_RETURN(std::unique_ptr<Journal> journal, Journal::Open(options));
  if (absl::Status clearable = journal->CheckClearable(); !clearable.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "not restoring: ", clearable.message(),
        ", so the same restore would run again at every start; make its "
        "directory writable, or restore by hand from the file (text, one "
        "record a line) and move it away"));
  }
  RestoreReport report =
      RestoreEntries(journal->contents(), threads, irqs, steering, neighbours);
  report.journal = journal->path();
  // Cleared even when some entries failed (they would fail again on every
  // start, and the report names them for the operator), but for the
  // neighbours' records whose undo can still come.
  RETURN_IF_ERROR(ClearRestored(*journal, report));
  report.kept_copy = journal->kept_copy();
  return report;
}

absl::StatusOr<RestoreReport> RestoreJournal(const JournalOptions& options) {
  std::unique_ptr<ThreadOps> threads =
      MakeKernelThreadOps("/proc", "/sys/fs/cgroup", "/sys");
  std::unique_ptr<IrqOps> irqs = MakeProcIrqOps("/proc");
  return RestoreJournal(options, *threads, *irqs);
}

}  // namespace locus
