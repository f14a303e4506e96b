#include "agent/daemon/instance_lock.h"

#include <fcntl.h>
#include <sys/file.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "agent/journal/journal.h"
#include "agent/journal/journal_lock.h"
#include "common/os_error.h"
#include "common/status_macros.h"

namespace locus {

absl::StatusOr<InstanceLock> InstanceLock::Acquire(
    const std::string& journal_path) {
  std::error_code ignored;  // a missing directory shows up at open()
  std::filesystem::create_directories(
      std::filesystem::path(journal_path).parent_path(), ignored);
  // Keyed on the file, not on how it is named: a second daemon given the
  // journal through a symlink (to it or to its directory) finds it locked.
  // A path that cannot be resolved (a link loop) is FailedPrecondition too.
  ASSIGN_OR_RETURN(const std::string journal, ResolveJournalPath(journal_path));
  const std::string path = journal + ".lock";
  UniqueFd fd(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!fd) return absl::UnavailableError(ErrnoMessage(path, errno));
  if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat(
          "another locusd is running with this journal (", path,
          " is locked); stop it first, or use `locusctl restore`"));
    }
    return absl::UnavailableError(ErrnoMessage(path, errno));
  }
  // The lock file is one per name of the journal; a hard link is another
  // name. The file's own lock, which a running daemon's Journal holds, is
  // tried too, and let go at once: this daemon's Journal takes it next.
  // Any other error is the Journal's to report when it opens the file.
  absl::StatusOr<UniqueFd> held = LockJournalFileAt(journal);
  if (absl::IsFailedPrecondition(held.status())) return held.status();
  return InstanceLock(std::move(fd));
}

}  // namespace locus
