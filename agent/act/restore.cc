#include "agent/act/restore.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "agent/host/cpu_mask.h"

namespace locus {

RestoreReport RestoreEntries(const JournalContents& contents,
                             ThreadOps& threads, IrqOps& irqs) {
  RestoreReport report;
  report.corrupt_records = contents.corrupt_records;
  report.truncated_tail = contents.truncated_tail;
  for (const std::string& problem : contents.problems) {
    report.messages.push_back(problem);
  }
  for (const auto& [tid, entry] : contents.threads) {
    const std::string who =
        absl::StrCat("thread ", tid, " (pid ", entry.pid, ")");
    uint64_t start_time = 0;
    int err = threads.StartTime(tid, &start_time);
    if (err == ESRCH || (err == 0 && start_time != entry.start_time)) {
      ++report.dropped;
      report.messages.push_back(absl::StrCat(
          who, ": gone", err == 0 ? " (tid reused)" : "", ", dropped"));
      continue;
    }
    if (err != 0) {
      report.errors.push_back(absl::StrCat(who, ": ", std::strerror(err)));
      continue;
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
      ++report.dropped;
      report.messages.push_back(absl::StrCat(who, ": gone, dropped"));
    } else if (err != 0) {
      report.errors.push_back(absl::StrCat(who, ": sched_setaffinity(",
                                           FormatCpuList(cpus),
                                           "): ", std::strerror(err)));
    } else {
      ++report.threads_restored;
      report.messages.push_back(
          absl::StrCat(who, ": restored cpus ", FormatCpuList(cpus)));
    }
  }
  for (const auto& [irq, entry] : contents.irqs) {
    int err = irqs.WriteAffinity(irq, entry.cpus);
    if (err == ENOENT) {
      ++report.dropped;
      report.messages.push_back(absl::StrCat("irq ", irq, ": gone, dropped"));
    } else if (err != 0) {
      report.errors.push_back(
          absl::StrCat("irq ", irq, ": write smp_affinity_list ",
                       FormatCpuList(entry.cpus), ": ", std::strerror(err)));
    } else {
      ++report.irqs_restored;
      report.messages.push_back(absl::StrCat("irq ", irq, ": restored cpus ",
                                             FormatCpuList(entry.cpus)));
    }
  }
  return report;
}

absl::StatusOr<RestoreReport> RestoreJournal(const JournalOptions& options,
                                             ThreadOps& threads, IrqOps& irqs) {
  absl::StatusOr<std::unique_ptr<Journal>> journal = Journal::Open(options);
  if (!journal.ok()) return journal.status();
  RestoreReport report = RestoreEntries((*journal)->contents(), threads, irqs);
  // Cleared even when some entries failed: they would fail again on every
  // start, and the report names them for the operator.
  absl::Status status = (*journal)->Clear();
  if (!status.ok()) return status;
  return report;
}

absl::StatusOr<RestoreReport> RestoreJournal(const JournalOptions& options) {
  std::unique_ptr<ThreadOps> threads =
      MakeKernelThreadOps("/proc", "/sys/fs/cgroup", "/sys");
  std::unique_ptr<IrqOps> irqs = MakeProcIrqOps("/proc");
  return RestoreJournal(options, *threads, *irqs);
}

}  // namespace locus
