#include "agent/daemon/instance_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace locus {

absl::StatusOr<InstanceLock> InstanceLock::Acquire(
    const std::string& journal_path) {
  const std::string path = journal_path + ".lock";
  std::error_code ignored;  // a missing directory shows up at open()
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(),
                                      ignored);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat(path, ": ", strerror(errno)));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    close(fd);
    if (err == EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat(
          "another locusd is running with this journal (", path,
          " is locked); stop it first, or use `locusctl restore`"));
    }
    return absl::UnavailableError(absl::StrCat(path, ": ", strerror(err)));
  }
  return InstanceLock(fd);
}

InstanceLock::~InstanceLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace locus
