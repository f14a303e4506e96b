#include "common/file_read.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/os_error.h"

namespace locus {
namespace {

// Reads start at least this large: pseudo-files say 0 or 4096 whatever
// they hold, and most hold less than a page.
constexpr size_t kFirstRead = 4096;

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "something else";
}

absl::Status CheckRegular(const std::string& path, const struct stat& st) {
  if (S_ISREG(st.st_mode)) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(path, ": is ", KindOf(st.st_mode), ", not a regular file"));
}

// Why stat found nothing: NotFound when nothing is at the path (ENOTDIR
// too: nothing can be), but a link whose target is missing is there, and
// unreadable (reporting it as absent would read as "removed" to a policy
// watcher).
absl::Status Missing(const std::string& path, int err) {
  if (err == ENOTDIR) return absl::NotFoundError(ErrnoMessage(path, err));
  struct stat st;
  if (err != ENOENT || lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
    return ErrnoStatus(path, err);
  }
  char target[PATH_MAX];
  ssize_t n = readlink(path.c_str(), target, sizeof(target) - 1);
  if (n < 0) return ErrnoStatus(path, errno);
  return absl::FailedPreconditionError(absl::StrCat(
      path, ": a symbolic link to ",
      std::string(target, static_cast<size_t>(n)), ", which names nothing"));
}

}  // namespace

absl::Status FileTooLarge(const std::string& path, size_t max_bytes,
                          unsigned long long at_least) {
  return absl::OutOfRangeError(absl::StrCat(path, ": larger than ", max_bytes,
                                            " bytes (", at_least, " or more)"));
}

absl::StatusOr<UniqueFd> OpenRegularFile(const std::string& path,
                                         bool follow_links) {
  struct stat st;
  int rc = follow_links ? stat(path.c_str(), &st) : lstat(path.c_str(), &st);
  if (rc != 0) return Missing(path, errno);
  if (absl::Status status = CheckRegular(path, st); !status.ok()) {
    return status;
  }
  int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  if (!follow_links) flags |= O_NOFOLLOW;
  UniqueFd fd(open(path.c_str(), flags));
  if (!fd) {
    if (errno == ELOOP && !follow_links) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, ": is a symbolic link, not a regular file"));
    }
    return Missing(path, errno);
  }
  if (fstat(fd.get(), &st) != 0) return LastErrnoStatus(path);
  if (absl::Status status = CheckRegular(path, st); !status.ok()) {
    return status;
  }
  return fd;
}

absl::StatusOr<std::string> ReadRegularFile(const std::string& path,
                                            const FileReadOptions& options) {
  absl::StatusOr<UniqueFd> fd = OpenRegularFile(path, options.follow_links);
  if (!fd.ok()) return fd.status();
  struct stat st;
  if (fstat(fd->get(), &st) != 0) return LastErrnoStatus(path);
  const size_t limit = options.max_bytes;
  if (static_cast<unsigned long long>(st.st_size) > limit) {
    return FileTooLarge(path, limit, st.st_size);
  }
  // One byte past the limit tells "exactly the limit" from "more".
  std::string text(
      std::min(std::max(static_cast<size_t>(st.st_size), kFirstRead), limit) +
          1,
      '\0');
  size_t used = 0;
  while (true) {
    if (used == text.size()) {
      if (used > limit) return FileTooLarge(path, limit, used);
      text.resize(std::min(2 * used, limit + 1));
    }
    ssize_t n = read(fd->get(), text.data() + used, text.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return LastErrnoStatus(path);
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  text.resize(used);
  return text;
}

}  // namespace locus
