#include "agent/sensors/libbpf_log.h"

#include <bpf/libbpf.h>

#include <cstdarg>
#include <cstdio>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/log.h"

namespace locus {
namespace {

__attribute__((format(printf, 2, 0))) int Print(libbpf_print_level level,
                                                const char* format,
                                                va_list args) {
  // As libbpf's own printer does: debug messages (every load step, the
  // verifier's full log) only for whoever asks for them (--v=2, or
  // locusctl log-level 2 before something loads).
  if (level == LIBBPF_DEBUG && LogVerbosity() < kLibbpfDebugVerbosity) {
    return 0;
  }
  va_list measure;
  va_copy(measure, args);
  int n = std::vsnprintf(nullptr, 0, format, measure);
  va_end(measure);
  if (n <= 0) return n;
  std::vector<char> text(static_cast<size_t>(n) + 1);
  std::vsnprintf(text.data(), text.size(), format, args);
  // One log line per line of text: a journald priority prefix covers only
  // its own line, and libbpf prints a load log as one multi-line message.
  LogLevel as = level == LIBBPF_WARN    ? LogLevel::kWarning
                : level == LIBBPF_DEBUG ? LogLevel::kDebug
                                        : LogLevel::kInfo;
  for (absl::string_view line : absl::StrSplit(
           absl::string_view(text.data(), n), '\n', absl::SkipEmpty())) {
    Log(as, line);
  }
  return n;
}

}  // namespace

void RouteLibbpfLogs() {
  static const bool routed = [] {
    libbpf_set_print(Print);
    return true;
  }();
  (void)routed;
}

}  // namespace locus
