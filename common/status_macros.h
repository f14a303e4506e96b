// Status propagation helpers. Debian's abseil (20220623) has no status
// macros, so the project carries the two it needs.
#ifndef LOCUS_COMMON_STATUS_MACROS_H_
#define LOCUS_COMMON_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define LOCUS_STATUS_CONCAT_INNER_(a, b) a##b
#define LOCUS_STATUS_CONCAT_(a, b) LOCUS_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (an absl::Status) is not OK.
#define RETURN_IF_ERROR(expr)                      \
  do {                                             \
    ::absl::Status locus_status_ = (expr);         \
    if (!locus_status_.ok()) return locus_status_; \
  } while (0)

// ASSIGN_OR_RETURN(lhs, expr): evaluates `expr` (an absl::StatusOr<T>); on
// error returns its status, otherwise moves the value into `lhs`, which may be
// a declaration (`auto x`) or an existing variable.
#define ASSIGN_OR_RETURN(lhs, expr) \
  LOCUS_ASSIGN_OR_RETURN_IMPL_(     \
      LOCUS_STATUS_CONCAT_(locus_statusor_, __LINE__), lhs, expr)

#define LOCUS_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return std::move(tmp).status();     \
  lhs = std::move(tmp).value()

#endif  // LOCUS_COMMON_STATUS_MACROS_H_
