// Kernel CPU sets beyond the cpulist text (policy/cpu_list.h): hex masks
// ("ff,00000001", as in smp_affinity and Cpus_allowed) and set operations.
#ifndef LOCUS_AGENT_HOST_CPU_MASK_H_
#define LOCUS_AGENT_HOST_CPU_MASK_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policy/cpu_list.h"

namespace locus {

// Parses a comma-separated 32-bit-word hex mask (most significant word first).
absl::StatusOr<std::vector<int>> ParseCpuMask(absl::string_view text);

// The CPUs ascending, each once (as the kernel reports a mask).
std::vector<int> SortedCpus(std::vector<int> cpus);

// Sorted intersection of two ascending CPU sets.
std::vector<int> IntersectCpus(const std::vector<int>& a,
                               const std::vector<int>& b);

}  // namespace locus

#endif  // LOCUS_AGENT_HOST_CPU_MASK_H_
