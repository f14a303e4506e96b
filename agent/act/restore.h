// Putting back what the journal says: on SIGTERM/SIGINT, at start when a
// crashed run left a journal, and for `locusd --restore`.
#ifndef LOCUS_AGENT_ACT_RESTORE_H_
#define LOCUS_AGENT_ACT_RESTORE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/act/journal.h"
#include "agent/act/kernel_ops.h"

namespace locus {

struct RestoreReport {
  int threads_restored = 0;
  int irqs_restored = 0;
  int dropped = 0;  // thread or IRQ no longer exists (or TID recycled)
  int corrupt_records = 0;
  bool truncated_tail = false;
  std::string journal;    // the journal restored from (resolved path)
  std::string kept_copy;  // where a journal with damaged records was kept
  std::vector<std::string> messages;  // one per entry: what was done
  std::vector<std::string> errors;    // entries that could not be restored
  bool ok() const { return errors.empty(); }
};

// Restores every entry (best effort: one failure does not stop the rest).
RestoreReport RestoreEntries(const JournalContents& contents,
                             ThreadOps& threads, IrqOps& irqs);

// Reads the journal at options.path, restores every complete entry (a torn
// last record is reported and ignored) and deletes the file (or sets it
// aside, when it had damaged records). Fails when the journal cannot be read
// or deleted, and, before restoring anything, when it could not be deleted
// afterwards (a read-only mount): the same restore would otherwise run again
// at every start, over whatever the admin changed since. Per-entry failures
// are in the report.
absl::StatusOr<RestoreReport> RestoreJournal(const JournalOptions& options,
                                             ThreadOps& threads, IrqOps& irqs);

// The same against the running kernel (/proc, /sys, /sys/fs/cgroup): what
// `locusd --restore [--journal=PATH]` calls before it exits.
absl::StatusOr<RestoreReport> RestoreJournal(const JournalOptions& options);

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_RESTORE_H_
