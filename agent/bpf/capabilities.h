// Which of the capabilities the sensors need the process lacks.
#ifndef LOCUS_AGENT_BPF_CAPABILITIES_H_
#define LOCUS_AGENT_BPF_CAPABILITIES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace locus {

// Names ("CAP_BPF", "CAP_PERFMON", "CAP_SYS_ADMIN") missing from the
// effective set of this process; empty when all are held.
absl::StatusOr<std::vector<std::string>> MissingSensorCapabilities();

}  // namespace locus

#endif  // LOCUS_AGENT_BPF_CAPABILITIES_H_
