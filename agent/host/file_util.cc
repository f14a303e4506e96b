#include "agent/host/file_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace locus {
namespace {

absl::Status ErrnoStatus(int err, absl::string_view what) {
  std::string message = absl::StrCat(what, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    default:
      return absl::UnknownError(message);
  }
}

}  // namespace

std::string JoinPath(absl::string_view root, absl::string_view path) {
  while (!root.empty() && root.back() == '/') root.remove_suffix(1);
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  return absl::StrCat(root, "/", path);
}

absl::StatusOr<std::string> ReadTextFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, path);
  std::string out;
  char buf[8192];
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      return ErrnoStatus(err, path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

absl::StatusOr<std::vector<DirEntry>> ListDirectoryEntries(
    const std::string& path) {
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return ErrnoStatus(errno, path);
  std::vector<DirEntry> entries;
  while (struct dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    entries.push_back({std::move(name), entry->d_ino});
  }
  closedir(dir);
  std::sort(
      entries.begin(), entries.end(),
      [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return entries;
}

absl::StatusOr<std::vector<std::string>> ListDirectory(
    const std::string& path) {
  absl::StatusOr<std::vector<DirEntry>> entries = ListDirectoryEntries(path);
  if (!entries.ok()) return entries.status();
  std::vector<std::string> names;
  names.reserve(entries->size());
  for (DirEntry& entry : *entries) names.push_back(std::move(entry.name));
  return names;
}

absl::StatusOr<std::string> ReadFirstLine(const std::string& path) {
  absl::StatusOr<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  absl::string_view view = *text;
  size_t newline = view.find('\n');
  if (newline != absl::string_view::npos) view = view.substr(0, newline);
  view = absl::StripAsciiWhitespace(view);
  if (view.empty()) {
    return absl::DataLossError(absl::StrCat(path, ": empty (truncated?)"));
  }
  return std::string(view);
}

}  // namespace locus
