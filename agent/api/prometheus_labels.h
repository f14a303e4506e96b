// Label values the exporter's files share.
#ifndef LOCUS_AGENT_API_PROMETHEUS_LABELS_H_
#define LOCUS_AGENT_API_PROMETHEUS_LABELS_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"

namespace locus {

// A node id as a label; "unknown" for -1 (no known node).
inline std::string NodeLabel(int32_t node) {
  return node < 0 ? "unknown" : absl::StrCat(node);
}

}  // namespace locus

#endif  // LOCUS_AGENT_API_PROMETHEUS_LABELS_H_
