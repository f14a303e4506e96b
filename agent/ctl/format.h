// How locusctl shows the agent's messages to people: pure functions from
// protos to text, so that every view is testable without a daemon.
#ifndef LOCUS_AGENT_CTL_FORMAT_H_
#define LOCUS_AGENT_CTL_FORMAT_H_

#include <google/protobuf/message.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "locus/v1/agent.pb.h"

namespace locus {
namespace ctl {

// policy/cpu_list's "0-3,8,10-11", and "-" when empty.
std::string FormatCpuList(const std::vector<int>& cpus);
std::string ModeName(v1::AgentMode mode);  // "enforce", "dry_run", "unknown"
// local / (local + remote) as "82%"; "-" without faults.
std::string FormatLocalShare(uint64_t local, uint64_t remote);

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

// The `top` screen for one tick: at most `rows` lines, none wider than
// `cols`. Threads are sorted by remote faults, the worst first.
std::vector<std::string> RenderTop(const v1::Metrics& metrics, int rows,
                                   int cols);

}  // namespace ctl
}  // namespace locus

#endif  // LOCUS_AGENT_CTL_FORMAT_H_
