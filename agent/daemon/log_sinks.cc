#include "agent/daemon/log_sinks.h"

#include <sys/uio.h>
#include <systemd/sd-journal.h>

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/printable.h"
#include "common/utf8.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace locus {

absl::StatusOr<LogFormat> ParseLogFormat(absl::string_view text) {
  if (text == "text") return LogFormat::kText;
  if (text == "json") return LogFormat::kJson;
  return absl::InvalidArgumentError(
      absl::StrCat("--log_format: '", text, "' is not text or json"));
}

void JournalSink::Write(const LogEntry& entry) {
  // "NAME=value" each; journald takes any bytes after the '=' (a value with
  // a newline included), so the fields, data that tools match on
  // (LOCUS_COMM=...), go as they are. MESSAGE is the text journalctl shows
  // and `journalctl -a` prints raw: it passes through Printable, as the
  // text sink's lines do.
  std::vector<std::string> items;
  items.reserve(entry.fields.size() + 4);
  items.push_back(absl::StrCat("MESSAGE=", Printable(entry.message)));
  items.push_back(absl::StrCat("PRIORITY=", static_cast<int>(entry.level)));
  items.push_back(absl::StrCat("SYSLOG_IDENTIFIER=", identifier_));
  if (!entry.message_id.empty()) {
    items.push_back(absl::StrCat("MESSAGE_ID=", entry.message_id));
  }
  for (const LogField& field : entry.fields) {
    items.push_back(absl::StrCat(field.name, "=", field.value));
  }
  std::vector<iovec> iov;
  iov.reserve(items.size());
  for (std::string& item : items)
    iov.push_back(iovec{item.data(), item.size()});
  if (sd_journal_sendv(iov.data(), static_cast<int>(iov.size())) < 0) {
    fallback_.Write(entry);
  }
}

std::string JsonLogLine(const LogEntry& entry, absl::Time now) {
  google::protobuf::Struct object;
  auto& fields = *object.mutable_fields();
  fields["time"].set_string_value(
      absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", now, absl::UTCTimeZone()));
  fields["PRIORITY"].set_number_value(static_cast<int>(entry.level));
  fields["LEVEL"].set_string_value(std::string(LogLevelName(entry.level)));
  fields["MESSAGE"].set_string_value(ValidUtf8(entry.message));
  if (!entry.message_id.empty()) {
    fields["MESSAGE_ID"].set_string_value(entry.message_id);
  }
  for (const LogField& field : entry.fields) {
    double number = 0;
    if (field.number && absl::SimpleAtod(field.value, &number)) {
      fields[field.name].set_number_value(number);
    } else {
      fields[field.name].set_string_value(ValidUtf8(field.value));
    }
  }
  std::string line;
  // Printing a Struct of numbers and valid UTF-8 strings cannot fail.
  (void)google::protobuf::util::MessageToJsonString(object, &line);
  line += "\n";
  return line;
}

void JsonSink::Write(const LogEntry& entry) {
  std::string line = JsonLogLine(entry, absl::Now());
  // One fwrite per line so lines from different threads do not interleave.
  std::fwrite(line.data(), 1, line.size(), out_);
}

std::unique_ptr<LogSink> MakeLogSink(LogFormat format,
                                     absl::string_view identifier) {
  if (format == LogFormat::kJson) return std::make_unique<JsonSink>(stderr);
  if (StderrIsJournal()) {
    return std::make_unique<JournalSink>(std::string(identifier));
  }
  return nullptr;
}

}  // namespace locus
