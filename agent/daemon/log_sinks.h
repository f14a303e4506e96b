// Where locusd's log entries (common/log.h) go: journald's native protocol
// when stderr is the journal, so structured events keep their MESSAGE_ID and
// LOCUS_* fields; one JSON object per line for containers (--log_format=json);
// plain text lines anywhere else (the default sink).
#ifndef LOCUS_AGENT_DAEMON_LOG_SINKS_H_
#define LOCUS_AGENT_DAEMON_LOG_SINKS_H_

#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/log.h"

namespace locus {

enum class LogFormat { kText, kJson };

// "text" or "json"; an error names the flag and the values it takes.
absl::StatusOr<LogFormat> ParseLogFormat(absl::string_view text);

// One entry per sd_journal_sendv(3): MESSAGE, PRIORITY, SYSLOG_IDENTIFIER,
// MESSAGE_ID and the fields. An entry journald refuses (it went away) is
// written as a text line to stderr instead, so nothing is lost silently.
class JournalSink : public LogSink {
 public:
  explicit JournalSink(std::string identifier)
      : identifier_(std::move(identifier)) {}
  void Write(const LogEntry& entry) override;

 private:
  const std::string identifier_;
  StderrTextSink fallback_;
};

// {"time":"...","PRIORITY":6,"LEVEL":"info","MESSAGE":"...",
//  "MESSAGE_ID":"...","LOCUS_TID":1240,...} per line, written with
// protobuf's JSON printer; text that is not UTF-8 (a comm) is made so.
std::string JsonLogLine(const LogEntry& entry, absl::Time now);

class JsonSink : public LogSink {
 public:
  // `out` is borrowed (stderr in locusd).
  explicit JsonSink(std::FILE* out) : out_(out) {}
  void Write(const LogEntry& entry) override;

 private:
  std::FILE* const out_;
};

// The sink for a --log_format: json, or for text the journal when stderr is
// journald's stream (StderrIsJournal) and null otherwise (the default text
// sink stays).
std::unique_ptr<LogSink> MakeLogSink(LogFormat format,
                                     absl::string_view identifier);

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_LOG_SINKS_H_
