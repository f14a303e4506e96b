#include "agent/api/prometheus_textfile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/os_error.h"
#include "common/unique_fd.h"

namespace locus {
namespace {

absl::Status WriteAll(int fd, absl::string_view text, const std::string& name) {
  while (!text.empty()) {
    ssize_t n = write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return LastErrnoStatus(absl::StrCat("writing ", name));
    text.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

// Writes the temporary and renames it; the caller removes it on error.
absl::Status WriteAndRename(int fd, const std::string& tmp,
                            const std::string& path, absl::string_view text) {
  if (fchmod(fd, 0644) != 0) {
    return LastErrnoStatus(absl::StrCat("chmod ", tmp));
  }
  if (absl::Status written = WriteAll(fd, text, tmp); !written.ok()) {
    return written;
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    return LastErrnoStatus(absl::StrCat("renaming ", tmp, " to ", path));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteTextfileAtomically(const std::string& path,
                                     absl::string_view text) {
  // "locus.prom.XXXXXX": not *.prom, so the collector skips a half-written
  // one.
  std::string tmp = absl::StrCat(path, ".XXXXXX");
  std::vector<char> name(tmp.begin(), tmp.end());
  name.push_back('\0');
  UniqueFd fd(mkostemp(name.data(), O_CLOEXEC));
  if (!fd.valid()) {
    return LastErrnoStatus(absl::StrCat("creating a temporary for ", path));
  }
  tmp = name.data();
  absl::Status status = WriteAndRename(fd.get(), tmp, path, text);
  if (!status.ok()) unlink(tmp.c_str());
  return status;
}

}  // namespace locus
