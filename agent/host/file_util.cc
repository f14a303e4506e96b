#include "agent/host/file_util.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/os_error.h"
#include "common/status_macros.h"

namespace locus {
namespace {

struct CloseDir {
  void operator()(DIR* dir) const { closedir(dir); }
};

}  // namespace

std::string JoinPath(absl::string_view root, absl::string_view path) {
  while (!root.empty() && root.back() == '/') root.remove_suffix(1);
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  return absl::StrCat(root, "/", path);
}

absl::StatusOr<std::string> ReadTextFile(const std::string& path,
                                         size_t max_bytes) {
  return ReadRegularFile(path, {.max_bytes = max_bytes});
}

absl::StatusOr<std::vector<DirEntry>> ListDirectoryEntries(
    const std::string& path) {
  std::unique_ptr<DIR, CloseDir> dir(opendir(path.c_str()));
  if (dir == nullptr) return LastErrnoStatus(path);
  std::vector<DirEntry> entries;
  while (struct dirent* entry = readdir(dir.get())) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    entries.push_back({std::move(name), entry->d_ino});
  }
  std::sort(
      entries.begin(), entries.end(),
      [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return entries;
}

absl::StatusOr<std::vector<std::string>> ListDirectory(
    const std::string& path) {
  ASSIGN_OR_RETURN(std::vector<DirEntry> entries, ListDirectoryEntries(path));
  std::vector<std::string> names;
  names.reserve(entries.size());
  for (DirEntry& entry : entries) names.push_back(std::move(entry.name));
  return names;
}

absl::StatusOr<std::string> ReadFirstLine(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  absl::string_view view = text;
  size_t newline = view.find('\n');
  if (newline != absl::string_view::npos) view = view.substr(0, newline);
  view = absl::StripAsciiWhitespace(view);
  if (view.empty()) {
    return absl::DataLossError(absl::StrCat(path, ": empty (truncated?)"));
  }
  return std::string(view);
}

}  // namespace locus
