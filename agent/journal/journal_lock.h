// The journal's own lock: an exclusive flock(2) on the journal file, which
// the daemon holds for as long as the file exists. A lock file next to a
// path ("<journal>.lock", InstanceLock) is one per name; the file's inode is
// one per journal, so a second locusd given it by another name (a hard link,
// a bind mount) finds it held before it reads, "restores" or deletes it.
#ifndef LOCUS_AGENT_JOURNAL_JOURNAL_LOCK_H_
#define LOCUS_AGENT_JOURNAL_JOURNAL_LOCK_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/unique_fd.h"

namespace locus {

// Locks the file `fd` is open on (`path` names it in messages), without
// waiting. FailedPrecondition when another open file holds it ("another
// locusd (pid N) is running with this journal: ..."), Unavailable when the
// filesystem cannot lock. flock conflicts between open files, not processes:
// a second Journal on the same file in this process is refused too.
absl::Status LockJournalFile(int fd, const std::string& path);

// The same on the regular file at `path`: the open file that holds the lock
// (closing it lets go), or an empty one when there is no regular file to lock
// (missing, a FIFO, unreadable: reading the journal reports those).
absl::StatusOr<UniqueFd> LockJournalFileAt(const std::string& path);

}  // namespace locus

#endif  // LOCUS_AGENT_JOURNAL_JOURNAL_LOCK_H_
