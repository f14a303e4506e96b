// Label values the exporter's files share.
#ifndef LOCUS_AGENT_API_PROMETHEUS_LABELS_H_
#define LOCUS_AGENT_API_PROMETHEUS_LABELS_H_

#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "locus/v1/agent.pb.h"

namespace locus {

// A node id as a label; "unknown" for -1 (no known node).
inline std::string NodeLabel(int32_t node) {
  return node < 0 ? "unknown" : absl::StrCat(node);
}

// EXPERIMENT_STATE_GUARDRAIL -> "guardrail": the state label of
// locus_experiments_ended_total and the LOCUS_OUTCOME of the journald entry
// that ends an experiment, one word for both.
inline std::string ExperimentStateWord(v1::ExperimentState state) {
  return absl::AsciiStrToLower(
      absl::StripPrefix(v1::ExperimentState_Name(state), "EXPERIMENT_STATE_"));
}

}  // namespace locus

#endif  // LOCUS_AGENT_API_PROMETHEUS_LABELS_H_
