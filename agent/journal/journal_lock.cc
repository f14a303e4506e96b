#include "agent/journal/journal_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstdint>
#include <optional>

#include "absl/strings/str_cat.h"
#include "agent/host/file_util.h"
#include "agent/host/proc_parse.h"
#include "common/os_error.h"

namespace locus {
namespace {

// Who holds the lock on the file `fd` is open on, as /proc/locks says: only
// to name it in the message, so nothing when it cannot be read.
std::optional<int32_t> HolderOf(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return std::nullopt;
  auto locks = ReadTextFile("/proc/locks");
  if (!locks.ok()) return std::nullopt;
  return ParseFlockHolder(*locks, major(st.st_dev), minor(st.st_dev),
                          st.st_ino);
}

}  // namespace

absl::Status LockJournalFile(int fd, const std::string& path) {
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) return absl::OkStatus();
  if (errno != EWOULDBLOCK) {
    return absl::UnavailableError(ErrnoMessage(path, errno));
  }
  const std::optional<int32_t> pid = HolderOf(fd);
  return absl::FailedPreconditionError(absl::StrCat(
      "another locusd", pid ? absl::StrCat(" (pid ", *pid, ")") : "",
      " is running with this journal: ", path,
      " is locked (the file itself, whatever name reaches it: a hard link to "
      "it is the same journal); stop it first, or use `locusctl restore`"));
}

absl::StatusOr<UniqueFd> LockJournalFileAt(const std::string& path) {
  // O_NONBLOCK: a FIFO put there must not hang the open.
  UniqueFd fd(
      open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
  struct stat st;
  if (!fd || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return UniqueFd();
  }
  if (absl::Status status = LockJournalFile(fd.get(), path); !status.ok()) {
    return status;
  }
  return fd;
}

}  // namespace locus
