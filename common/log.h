// Logging: every line, plain or a structured event (log_events.h), goes to
// one process-wide LogSink. The default writes one line per entry to stderr:
// when stderr is journald's stream each line carries a "<N>" syslog priority
// prefix that journald turns into the entry's priority; elsewhere the level
// is spelled out instead. locusd's main installs the
// journald or JSON sink (agent/daemon/log_sinks.h); tests install a fake.
#ifndef LOCUS_COMMON_LOG_H_
#define LOCUS_COMMON_LOG_H_

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/printable.h"

namespace locus {

enum class LogLevel { kError = 3, kWarning = 4, kInfo = 6, kDebug = 7 };

inline absl::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      break;
  }
  return "info";
}

// One structured field, named as journald wants it (upper case, digits and
// '_'): "LOCUS_TID". `number` says the value is an integer (JSON writes it
// unquoted).
struct LogField {
  std::string name;
  std::string value;
  bool number = false;
};

struct LogEntry {
  LogLevel level = LogLevel::kInfo;
  std::string message;     // the text line, as a terminal shows it
  std::string message_id;  // 32 hex digits (log_events.h); empty: a plain line
  std::vector<LogField> fields;
};

class LogSink {
 public:
  virtual ~LogSink() = default;
  // Called from any thread; implementations keep entries whole.
  virtual void Write(const LogEntry& entry) = 0;
};

// Whether stderr is the stream systemd connected to journald: JOURNAL_STREAM
// ("DEV:INO") names it, and a child whose stderr was redirected elsewhere
// inherits the variable but not the stream (systemd.exec(5)).
inline bool StderrIsJournal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  unsigned long long dev = 0, ino = 0;
  struct stat st {};
  if (stream == nullptr || std::sscanf(stream, "%llu:%llu", &dev, &ino) != 2 ||
      fstat(2, &st) != 0) {
    return false;
  }
  return st.st_dev == dev && st.st_ino == ino;
}

// The line a text sink writes for `entry`: with `journald`, a "<N>"
// priority prefix; otherwise the level spelled out (none for info). The
// message passes through Printable: it quotes names any local user picks
// (a comm, an executable or cgroup path), and a newline or an escape
// sequence in one must not forge a line or reach root's terminal. That makes
// every entry one line (a message of several shows "\n" between them).
inline std::string TextLogLine(const LogEntry& entry, bool journald) {
  const std::string message = Printable(entry.message);
  if (journald) {
    return absl::StrCat("<", static_cast<int>(entry.level), ">", message, "\n");
  }
  if (entry.level == LogLevel::kInfo) return absl::StrCat(message, "\n");
  return absl::StrCat(LogLevelName(entry.level), ": ", message, "\n");
}

// Lines on stderr; fields are not shown (the message says it all).
class StderrTextSink : public LogSink {
 public:
  void Write(const LogEntry& entry) override {
    static const bool journald = StderrIsJournal();
    const std::string line = TextLogLine(entry, journald);
    // One fwrite per line so lines from different threads do not interleave.
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
};

namespace log_internal {
inline std::atomic<LogSink*> sink{nullptr};
inline std::atomic<int> verbosity{0};
}  // namespace log_internal

// Borrowed; nullptr brings back the stderr text sink. Set once in main (or
// by a test) before other threads log.
inline void SetLogSink(LogSink* sink) { log_internal::sink.store(sink); }

// --v: 0 logs info, warnings and errors; 1 adds the agent's debug lines
// (VLog(1, ...)); 2 adds libbpf's debug messages. Changeable at any time
// (the SetLogLevel call).
inline int LogVerbosity() { return log_internal::verbosity.load(); }
inline void SetLogVerbosity(int v) { log_internal::verbosity.store(v); }

inline void Log(const LogEntry& entry) {
  static StderrTextSink stderr_sink;
  LogSink* sink = log_internal::sink.load();
  (sink != nullptr ? *sink : stderr_sink).Write(entry);
}

inline void Log(LogLevel level, absl::string_view message) {
  Log(LogEntry{level, std::string(message), {}, {}});
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
// A debug line, written only at verbosity `v` or more.
template <typename... Args>
void VLog(int v, const Args&... args) {
  if (LogVerbosity() >= v) Log(LogLevel::kDebug, absl::StrCat(args...));
}

}  // namespace locus

#endif  // LOCUS_COMMON_LOG_H_
