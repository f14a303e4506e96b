// The A/B experiment's report as text: `locusctl experiment status` (the
// verdict first, then how sure it is and over what), and the one line that
// `watch` and `top` show per tick while one runs. Every string the agent
// sends (a worker's comm above all: any process may name itself) is shown
// through Printable (common/printable.h), so it cannot move the cursor,
// clear the screen or forge a line.
#ifndef LOCUS_AGENT_CTL_EXPERIMENT_FORMAT_H_
#define LOCUS_AGENT_CTL_EXPERIMENT_FORMAT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "locus/v1/agent.pb.h"

namespace locus {
namespace ctl {

// A treated/control ratio as the change it means, its interval's bounds
// too: "+3.1 % [+1.2, +5.0]"; "n/a (why)" when the estimate is not valid.
std::string FormatRatioChange(const v1::ExperimentEstimate& estimate);

// "running", "done", "stopped", "stopped by the guardrail", ...
std::string ExperimentStateName(v1::ExperimentState state);

// The whole report: verdict, run, arms, estimates, connection shares,
// guardrail, sources, notes, and the per-worker table. Ends with '\n'.
std::string FormatExperiment(const v1::ExperimentReport& report);

// One line, no newline: "experiment exp-1 running A/B, 12 of 180
// intervals, 28m left; work per CPU-second +3.1 % [+1.2, +5.0], not
// significant".
std::string ExperimentLine(const v1::ExperimentReport& report);

}  // namespace ctl
}  // namespace locus

#endif  // LOCUS_AGENT_CTL_EXPERIMENT_FORMAT_H_
