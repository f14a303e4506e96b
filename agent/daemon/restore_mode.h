// Restoring what a journal holds: `locusd --restore`, and the daemon's start,
// which undoes what a crashed run left before it does anything else.
#ifndef LOCUS_AGENT_DAEMON_RESTORE_MODE_H_
#define LOCUS_AGENT_DAEMON_RESTORE_MODE_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "agent/daemon/instance_lock.h"

namespace locus {

// The instance lock on `journal_path`. Another daemon holding it is
// FailedPrecondition (fatal). A lock file that cannot be created (read-only
// or full journal directory) is not: the journal cannot be written either,
// so this process will change nothing; that is logged, and the result is
// nullopt.
absl::StatusOr<std::optional<InstanceLock>> LockJournal(
    const std::string& journal_path);

// Restores what the journal holds and deletes it, logging what it did; false
// when something could not be restored. The caller holds the lock.
bool RestoreJournalAt(const std::string& journal_path,
                      const std::string& sysfs_root,
                      const std::string& procfs_root);

// `locusd --restore`: the process exit code, 0 when there was nothing to do
// or everything was restored.
int RunRestore(const std::string& journal_path, const std::string& sysfs_root,
               const std::string& procfs_root);

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_RESTORE_MODE_H_
