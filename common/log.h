// Logging to stderr, one line per event. Under systemd (JOURNAL_STREAM set)
// each line carries a "<N>" syslog priority prefix that journald turns into
// the entry's priority; on a terminal the level is spelled out instead.
#ifndef LOCUS_COMMON_LOG_H_
#define LOCUS_COMMON_LOG_H_

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace locus {

enum class LogLevel { kError = 3, kWarning = 4, kInfo = 6, kDebug = 7 };

inline void Log(LogLevel level, absl::string_view message) {
  static const bool journald = std::getenv("JOURNAL_STREAM") != nullptr;
  std::string line;
  if (journald) {
    line = absl::StrCat("<", static_cast<int>(level), ">", message, "\n");
  } else {
    absl::string_view name = level == LogLevel::kError     ? "error: "
                             : level == LogLevel::kWarning ? "warning: "
                             : level == LogLevel::kDebug   ? "debug: "
                                                           : "";
    line = absl::StrCat(name, message, "\n");
  }
  // One fwrite per line so lines from different threads do not interleave.
  std::fwrite(line.data(), 1, line.size(), stderr);
}

template <typename... Args>
void LogInfo(const Args&... args) {
  Log(LogLevel::kInfo, absl::StrCat(args...));
}
template <typename... Args>
void LogWarning(const Args&... args) {
  Log(LogLevel::kWarning, absl::StrCat(args...));
}
template <typename... Args>
void LogError(const Args&... args) {
  Log(LogLevel::kError, absl::StrCat(args...));
}

}  // namespace locus

#endif  // LOCUS_COMMON_LOG_H_
