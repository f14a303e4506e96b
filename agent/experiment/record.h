// The experiment's record on disk, beside the journal: the running
// experiment's report (its arms first, before any worker is put back, then
// after each interval) and, once it ends, the last report, which `locusctl
// experiment status` shows after a restart too. Protobuf's JSON, replaced
// whole by a rename so a crash leaves the old record or the new one.
#ifndef LOCUS_AGENT_EXPERIMENT_RECORD_H_
#define LOCUS_AGENT_EXPERIMENT_RECORD_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "locus/v1/agent.pb.h"

namespace locus {

// A record larger than this is refused (a report of 1000 workers over a
// day of 10 s intervals is ~2 MiB).
inline constexpr size_t kMaxExperimentRecordBytes = 16 << 20;

absl::Status WriteExperimentRecord(const std::string& path,
                                   const v1::ExperimentReport& report);

// nullopt when there is no record; an error naming the path when it cannot
// be read or parsed (not a regular file, too large, not a report).
absl::StatusOr<std::optional<v1::ExperimentReport>> ReadExperimentRecord(
    const std::string& path);

}  // namespace locus

#endif  // LOCUS_AGENT_EXPERIMENT_RECORD_H_
