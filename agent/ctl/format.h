// How the agent's messages read as text and JSON: pure functions from the
// wire types, so that every view is testable without a daemon, and shared by
// locusctl and `locusd --probe` (which prints its report the same way
// without linking the gRPC client).
#ifndef LOCUS_AGENT_CTL_FORMAT_H_
#define LOCUS_AGENT_CTL_FORMAT_H_

#include <google/protobuf/message.h>
#include <google/protobuf/repeated_field.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/status_macros.h"
#include "locus/v1/agent.pb.h"

namespace locus {
namespace ctl {

// policy/cpu_list's "0-3,8,10-11", and "-" when empty (a column is never
// blank).
std::string CpuListOrDash(std::vector<int> cpus);
// A template only so that a braced list picks the vector overload.
template <typename Int>
std::string CpuListOrDash(const google::protobuf::RepeatedField<Int>& cpus) {
  return CpuListOrDash(std::vector<int>(cpus.begin(), cpus.end()));
}
std::string ModeName(v1::AgentMode mode);  // "enforce", "dry_run", "unknown"
// local / (local + remote) as "82%"; "-" without faults.
std::string FormatLocalShare(uint64_t local, uint64_t remote);
std::string FormatPercent(double fraction);  // 0.82 -> "82%"
std::string FormatDurationNs(uint64_t ns);   // absl's "1.5ms"

// "pin tid 1234 (pid 1200) to node 1 cpus 8-15: <reason> [applied]"
std::string FormatAction(const v1::Action& action);

// One summary line per tick, then one indented line per action, revert,
// external change and policy error of that tick. Ends with '\n'.
std::string FormatMetrics(const v1::Metrics& metrics);
std::string FormatStatus(const v1::AgentStatus& status);
std::string FormatExplain(const v1::ExplainResponse& explain);
std::string FormatProbe(const v1::ProbeReport& report);

// One line of JSON (proto field names, zero values included), no newline.
absl::StatusOr<std::string> ToJsonLine(
    const google::protobuf::Message& message);

// What a command prints for `message`: `format`'s text, or with `json` its
// JSON line and a newline.
template <typename Message>
absl::StatusOr<std::string> TextOrJson(const Message& message, bool json,
                                       std::string (*format)(const Message&)) {
  if (!json) return format(message);
  ASSIGN_OR_RETURN(std::string line, ToJsonLine(message));
  return line + "\n";
}

}  // namespace ctl
}  // namespace locus

#endif  // LOCUS_AGENT_CTL_FORMAT_H_
