// The part of `locusctl experiment status` that answers "did this make my
// service slower?": each arm's service times, run-queue wait, context
// switches and bytes per request, their treated/control ratios, the whole
// host's throughput and CPU busy, whether the arms' traffic is alike, and
// the latency guardrail.
#ifndef LOCUS_AGENT_CTL_EXPERIMENT_FEEL_FORMAT_H_
#define LOCUS_AGENT_CTL_EXPERIMENT_FEEL_FORMAT_H_

#include <string>

#include "locus/v1/agent.pb.h"

namespace locus {
namespace ctl {

// Lines indented by two, each ending with '\n'; empty for a report from an
// agent that measured none of it.
std::string FormatWhatUsersFeel(const v1::ExperimentReport& report);

}  // namespace ctl
}  // namespace locus

#endif  // LOCUS_AGENT_CTL_EXPERIMENT_FEEL_FORMAT_H_
