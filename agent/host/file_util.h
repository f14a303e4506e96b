// Reading small kernel text files (sysfs, procfs) through a root directory.
// sysfs and procfs report a size of 0 (or 4096) whatever the content, so the
// file is read to EOF rather than by its stat size.
#ifndef LOCUS_AGENT_HOST_FILE_UTIL_H_
#define LOCUS_AGENT_HOST_FILE_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace locus {

// Joins a root ("/", "" or a fixture directory) with an absolute-style path
// ("/devices/system/node"), with exactly one '/' between them.
std::string JoinPath(absl::string_view root, absl::string_view path);

// Whole file as text. Errors name the file and the errno text, with the
// errno's code (ErrnoStatus: a vanished task or file is NotFound).
absl::StatusOr<std::string> ReadTextFile(const std::string& path);

// Names in a directory (no "." or ".."), sorted. Errors name the directory.
absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& path);

struct DirEntry {
  std::string name;
  uint64_t inode = 0;  // as readdir gives it: no stat
};
// The same, with each entry's inode number.
absl::StatusOr<std::vector<DirEntry>> ListDirectoryEntries(
    const std::string& path);

// First line of a file with surrounding whitespace removed; an empty file is
// an error ("truncated"), since every single-value sysfs file has a value.
absl::StatusOr<std::string> ReadFirstLine(const std::string& path);

}  // namespace locus

#endif  // LOCUS_AGENT_HOST_FILE_UTIL_H_
