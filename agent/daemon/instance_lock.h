// One locusd per journal: the journal is the record of what this daemon
// changed, so a second daemon (or `locusd --restore`) must not replay it
// while the first is running and still acting on it.
#ifndef LOCUS_AGENT_DAEMON_INSTANCE_LOCK_H_
#define LOCUS_AGENT_DAEMON_INSTANCE_LOCK_H_

#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "common/unique_fd.h"

namespace locus {

// An exclusive flock(2) on "<journal>.lock", where <journal> is the journal's
// real path (ResolveJournalPath: symlinks resolved), held until destroyed (or
// the process ends, crash included: the kernel drops it). Creates the
// journal's directory when missing. A journal file there must not be locked
// either (journal_lock.h): a running daemon holds it whatever name it was
// given, a hard link included.
class InstanceLock {
 public:
  // FailedPrecondition naming the lock file or the journal when another
  // process holds either, or naming the journal path when it cannot be
  // resolved.
  static absl::StatusOr<InstanceLock> Acquire(const std::string& journal_path);

 private:
  explicit InstanceLock(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_INSTANCE_LOCK_H_
