#include "agent/experiment/record.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "agent/api/prometheus_textfile.h"
#include "common/os_error.h"
#include "common/unique_fd.h"
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
  // Non-blocking and no symlink: a FIFO or a link planted there is refused,
  // not waited on or followed.
  UniqueFd fd(
      open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    if (errno == ENOENT) return std::nullopt;
    return LastErrnoStatus(path);
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return LastErrnoStatus(path);
  if (!S_ISREG(st.st_mode))
    return absl::FailedPreconditionError(path + ": not a regular file");
  if (static_cast<size_t>(st.st_size) > kMaxExperimentRecordBytes) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": ", st.st_size, " bytes, more than a record's ",
                     kMaxExperimentRecordBytes));
  }
  std::string json(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < json.size()) {
    ssize_t n = read(fd.get(), json.data() + got, json.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return LastErrnoStatus(path);
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  json.resize(got);
  v1::ExperimentReport report;
  if (auto parsed = google::protobuf::util::JsonStringToMessage(json, &report);
      !parsed.ok()) {
    return absl::DataLossError(absl::StrCat(
        path, ": not an experiment record: ", std::string(parsed.message())));
  }
  return report;
}

}  // namespace locus
