// Which capabilities the process lacks, read with capget(2) (no libcap).
#ifndef LOCUS_AGENT_SENSORS_CAPABILITIES_H_
#define LOCUS_AGENT_SENSORS_CAPABILITIES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace locus {

// Names missing from the effective set for the sensors: CAP_BPF and
// CAP_PERFMON (since Linux 5.8 they replace CAP_SYS_ADMIN for loading
// tracing programs and reading kernel memory).
absl::StatusOr<std::vector<std::string>> MissingSensorCapabilities();

// The same for the whole agent: the sensors', plus CAP_SYS_NICE (other
// processes' affinity, move_pages) and CAP_SYS_PTRACE (other users'
// /proc/PID/numa_maps, move_pages on them). /proc/irq/N/smp_affinity_list is
// written as its owner, root: no capability needed.
absl::StatusOr<std::vector<std::string>> MissingAgentCapabilities();

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_CAPABILITIES_H_
