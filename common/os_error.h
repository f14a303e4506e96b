// errno as a value: the one way a failed system call becomes an
// absl::Status (code from the errno, message "what: strerror"), and back.
#ifndef LOCUS_COMMON_OS_ERROR_H_
#define LOCUS_COMMON_OS_ERROR_H_

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace locus {

// "what: No such file or directory".
inline std::string ErrnoMessage(absl::string_view what, int err) {
  return absl::StrCat(what, ": ", std::strerror(err));
}

// The status of a call that failed with `err` (ENOENT -> NotFound, EACCES
// and EPERM -> PermissionDenied, ...), saying what failed.
inline absl::Status ErrnoStatus(absl::string_view what, int err) {
  return absl::Status(absl::ErrnoToStatusCode(err), ErrnoMessage(what, err));
}

// ErrnoStatus(what, errno), read at once so nothing in between clobbers it.
inline absl::Status LastErrnoStatus(absl::string_view what) {
  return ErrnoStatus(what, errno);
}

// The errno a failed read most likely had: NotFound reads as ENOENT (the
// task or IRQ is gone), PermissionDenied as EPERM, anything else as EIO.
inline int ErrnoOf(const absl::Status& status) {
  if (status.ok()) return 0;
  if (absl::IsNotFound(status)) return ENOENT;
  if (absl::IsPermissionDenied(status)) return EPERM;
  return EIO;
}

}  // namespace locus

#endif  // LOCUS_COMMON_OS_ERROR_H_
