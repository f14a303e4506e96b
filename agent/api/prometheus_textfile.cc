#include "agent/api/prometheus_textfile.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/os_error.h"

namespace locus {
namespace {

// O_PATH: only a place to resolve names from; it needs no read permission
// on the directory and can do nothing else by itself.
constexpr int kDirFlags = O_PATH | O_DIRECTORY | O_CLOEXEC;

absl::Status WriteAll(int fd, absl::string_view text, const std::string& name) {
  while (!text.empty()) {
    ssize_t n = write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return LastErrnoStatus(absl::StrCat("writing ", name));
    text.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

// A name nobody can guess ahead, so that in a directory others may write a
// planted file cannot make every write fail (O_EXCL refuses it).
std::string TempSuffix() {
  static std::atomic<uint64_t> counter{0};
  uint64_t bits = 0;
  if (getrandom(&bits, sizeof(bits), GRND_NONBLOCK) !=
      static_cast<ssize_t>(sizeof(bits))) {
    bits = (static_cast<uint64_t>(getpid()) << 32) ^ counter.fetch_add(1);
  }
  return absl::StrCat(absl::Hex(bits & 0xffffffffffffULL, absl::kZeroPad12));
}

// Opens `dir` one component at a time, never following a symlink: what is
// opened is the directory that is on the path now, and stays it.
absl::StatusOr<UniqueFd> OpenWithoutSymlinks(const std::string& path,
                                             const std::string& dir) {
  bool absolute = !dir.empty() && dir.front() == '/';
  UniqueFd at(open(absolute ? "/" : ".", kDirFlags));
  if (!at) return LastErrnoStatus(path);
  std::string walked = absolute ? "" : ".";
  for (absl::string_view part : absl::StrSplit(dir, '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat(path,
                       ": '..' in the path; give the directory's real "
                       "path"));
    }
    std::string name(part);
    walked = absl::StrCat(walked, "/", name);
    UniqueFd next(openat(at.get(), name.c_str(), kDirFlags | O_NOFOLLOW));
    if (!next) {
      int err = errno;
      struct stat st;
      if (fstatat(at.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISLNK(st.st_mode)) {
        return absl::FailedPreconditionError(absl::StrCat(
            path, ": ", walked,
            " is a symbolic link; give the directory's real path (a link on "
            "it would let whoever controls it choose where root writes)"));
      }
      return ErrnoStatus(absl::StrCat(path, ": ", walked), err);
    }
    at = std::move(next);
  }
  return at;
}

}  // namespace

absl::StatusOr<AtomicTextfile> AtomicTextfile::Open(const std::string& path,
                                                    Symlinks symlinks) {
  size_t slash = path.rfind('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string dir = slash == std::string::npos ? std::string(".")
                    : slash == 0               ? std::string("/")
                                               : path.substr(0, slash);
  if (name.empty() || name == "." || name == "..") {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a file name (a directory?)"));
  }
  if (symlinks == Symlinks::kFollow) {
    UniqueFd fd(open(dir.c_str(), kDirFlags));
    if (!fd) return LastErrnoStatus(absl::StrCat(path, ": ", dir));
    return AtomicTextfile(std::move(fd), std::move(name), path);
  }
  absl::StatusOr<UniqueFd> fd = OpenWithoutSymlinks(path, dir);
  if (!fd.ok()) return fd.status();
  return AtomicTextfile(std::move(*fd), std::move(name), path);
}

absl::Status AtomicTextfile::Write(absl::string_view text) const {
  // "locus.prom.0123456789ab": not *.prom, so the collector skips a
  // half-written one. O_EXCL|O_NOFOLLOW: a name planted there is never
  // opened, only skipped.
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::string tmp = absl::StrCat(name_, ".", TempSuffix());
    UniqueFd fd(openat(dir_.get(), tmp.c_str(),
                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                       0600));
    if (!fd && errno == EEXIST) continue;
    if (!fd) {
      return LastErrnoStatus(absl::StrCat("creating a temporary for ", path_));
    }
    absl::Status status;
    if (fchmod(fd.get(), 0644) != 0) {
      status = LastErrnoStatus(absl::StrCat("chmod ", path_, " temporary"));
    } else {
      status = WriteAll(fd.get(), text, path_);
    }
    // Renamed within the held directory: the same one it was created in,
    // whatever the path names by now.
    if (status.ok() &&
        renameat(dir_.get(), tmp.c_str(), dir_.get(), name_.c_str()) != 0) {
      status = LastErrnoStatus(absl::StrCat("renaming a temporary to ", path_));
    }
    if (!status.ok()) unlinkat(dir_.get(), tmp.c_str(), 0);
    return status;
  }
  return absl::AlreadyExistsError(
      absl::StrCat("creating a temporary for ", path_, ": names taken"));
}

absl::Status WriteTextfileAtomically(const std::string& path,
                                     absl::string_view text) {
  absl::StatusOr<AtomicTextfile> file =
      AtomicTextfile::Open(path, AtomicTextfile::Symlinks::kFollow);
  if (!file.ok()) return file.status();
  return file->Write(text);
}

}  // namespace locus
