// `locusctl experiment pool FILE...`: one experiment's records from many
// hosts (each host's `experiment status --json`, or its record beside the
// journal) pooled into the fleet's answer (policy/experiment_pool.h).
#ifndef LOCUS_AGENT_CTL_EXPERIMENT_POOL_H_
#define LOCUS_AGENT_CTL_EXPERIMENT_POOL_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "locus/v1/agent.pb.h"

namespace locus {

// The pooled estimate of work per CPU-second over `reports`, as text; an
// error naming the report when one has no estimate or standard error.
absl::StatusOr<std::string> FormatPooled(
    const std::vector<std::pair<std::string, v1::ExperimentReport>>& reports);

// Reads `files` (protobuf JSON reports) and prints FormatPooled's text;
// returns the exit status (commands.h).
int RunExperimentPool(const std::vector<std::string>& files, std::ostream& out,
                      std::ostream& err);

}  // namespace locus

#endif  // LOCUS_AGENT_CTL_EXPERIMENT_POOL_H_
