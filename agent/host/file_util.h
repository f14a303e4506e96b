// Reading small kernel text files (sysfs, procfs) through a root directory,
// with common/file_read.h's reader: never blocking, regular files only, at
// most a stated size (sysfs and procfs report 0 or 4096 whatever the
// content, so the limit holds while reading, not by the stat size).
#ifndef LOCUS_AGENT_HOST_FILE_UTIL_H_
#define LOCUS_AGENT_HOST_FILE_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/file_read.h"

namespace locus {

// Joins a root ("/", "" or a fixture directory) with an absolute-style path
// ("/devices/system/node"), with exactly one '/' between them.
std::string JoinPath(absl::string_view root, absl::string_view path);

// Limits of the kernel files that outgrow kDefaultMaxReadBytes on a big
// host: /proc/PID/net/tcp{,6} (150 bytes a socket: ~400,000 sockets) and
// /proc/interrupts (11 bytes a CPU a line: 1,000 IRQs on 2,048 CPUs).
inline constexpr size_t kMaxTcpTableBytes = 64 << 20;
inline constexpr size_t kMaxInterruptsBytes = 32 << 20;

// Whole file as text, if it is a regular file of at most `max_bytes`
// (ReadRegularFile). Errors name the file and say why, with the errno's
// code where there is one (a vanished task or file is NotFound).
absl::StatusOr<std::string> ReadTextFile(
    const std::string& path, size_t max_bytes = kDefaultMaxReadBytes);

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
