#include "agent/experiment/record.h"

#include "absl/strings/str_cat.h"
#include "agent/api/prometheus_textfile.h"
#include "common/file_read.h"
#include "google/protobuf/util/json_util.h"

namespace locus {

absl::Status WriteExperimentRecord(const std::string& path,
                                   const v1::ExperimentReport& report) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  if (!google::protobuf::util::MessageToJsonString(report, &json, options)
           .ok()) {
    return absl::InternalError("the experiment report has no JSON form");
  }
  return WriteTextfileAtomically(path, json);
}

absl::StatusOr<std::optional<v1::ExperimentReport>> ReadExperimentRecord(
    const std::string& path) {
  // No symlink: a link planted there is refused, not followed (the reader
  // never waits on a FIFO and reads no more than a record's limit).
  absl::StatusOr<std::string> json = ReadRegularFile(
      path, {.max_bytes = kMaxExperimentRecordBytes, .follow_links = false});
  if (absl::IsNotFound(json.status())) return std::nullopt;
  if (!json.ok()) return json.status();
  v1::ExperimentReport report;
  if (auto parsed = google::protobuf::util::JsonStringToMessage(*json, &report);
      !parsed.ok()) {
    return absl::DataLossError(absl::StrCat(
        path, ": not an experiment record: ", std::string(parsed.message())));
  }
  return report;
}

}  // namespace locus
