// The one way the agent reads a file it does not write itself: kernel
// pseudo-files in /proc and /sys, cgroupfs, the kubelet's state, the policy,
// its own journal and experiment record. Whatever stands at the path (a
// FIFO, a device, a directory, a link to /proc/kcore, a sparse file of
// gigabytes) costs at most one open that never waits and `max_bytes` of
// memory, and is refused with a message naming the path and why.
//
// Why stat, open(O_NONBLOCK), then fstat: the stat keeps devices and FIFOs
// from being opened at all (opening some devices does things); something
// swapped in between is caught on the open descriptor, and O_NONBLOCK keeps
// a FIFO opened in that gap from waiting for a writer. The size stat gives
// is only a first refusal: /proc and /sys report 0 or 4096 whatever they
// hold, and a file may grow, so the limit holds while reading too.
#ifndef LOCUS_COMMON_FILE_READ_H_
#define LOCUS_COMMON_FILE_READ_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "common/unique_fd.h"

namespace locus {

// Enough for any single-value sysfs file, /proc/PID/{stat,status,maps} of
// a large process and /proc/interrupts of a few hundred CPUs; readers of
// bigger files (/proc/net/tcp) say their own limit.
inline constexpr size_t kDefaultMaxReadBytes = 8 << 20;

struct FileReadOptions {
  size_t max_bytes = kDefaultMaxReadBytes;
  // False for files no link should stand for (the agent's own journal and
  // records): a symbolic link at the path is refused, not followed.
  bool follow_links = true;
};

// Opens `path` read-only, non-blocking and close-on-exec, refusing anything
// but a regular file. Errors (every message starts with the path):
//   NotFound           nothing at the path (a vanished task, a missing file,
//                      a path through something that is not a directory)
//   FailedPrecondition not a regular file ("is a FIFO, not a regular file"),
//                      a link when links are not followed, a link that
//                      names nothing ("a symbolic link to X, which names
//                      nothing": present, so not absent)
//   others             the errno's meaning (PermissionDenied, ...)
absl::StatusOr<UniqueFd> OpenRegularFile(const std::string& path,
                                         bool follow_links = true);

// OpenRegularFile, then the whole file if it is at most options.max_bytes;
// OutOfRange ("larger than N bytes (M or more)") otherwise, judged from the
// size stat reports and again while reading, with at most max_bytes + 1
// bytes held.
absl::StatusOr<std::string> ReadRegularFile(
    const std::string& path, const FileReadOptions& options = {});

// OutOfRange saying that `path` holds `at_least` bytes or more, over
// `max_bytes`: for readers that stream a file through their own limit.
absl::Status FileTooLarge(const std::string& path, size_t max_bytes,
                          unsigned long long at_least);

}  // namespace locus

#endif  // LOCUS_COMMON_FILE_READ_H_
