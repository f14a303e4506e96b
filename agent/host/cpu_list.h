// Linux CPU list text ("0-3,8,10-11", as in cpulist, cpu/online,
// smp_affinity_list and Cpus_allowed_list) and hex CPU masks
// ("ff,00000001", as in smp_affinity and Cpus_allowed).
#ifndef LOCUS_AGENT_HOST_CPU_LIST_H_
#define LOCUS_AGENT_HOST_CPU_LIST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace locus {

// Largest CPU number accepted; guards against absurd ranges ("0-999999999")
// turning into gigabyte vectors.
inline constexpr int kMaxCpuNumber = 65535;

// Parses a CPU list into ascending, de-duplicated CPU numbers. Empty text
// (or only whitespace) is the empty set, as the kernel prints it for a
// memory-only node. Also accepts the "0-15:2" stride form the kernel takes.
absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view text);

// Formats CPUs (any order, duplicates allowed) as the kernel would:
// ascending, ranges collapsed, "" for none.
std::string FormatCpuList(const std::vector<int>& cpus);

// Parses a comma-separated 32-bit-word hex mask (most significant word first).
absl::StatusOr<std::vector<int>> ParseCpuMask(absl::string_view text);

// Sorted intersection of two ascending CPU sets.
std::vector<int> IntersectCpus(const std::vector<int>& a,
                               const std::vector<int>& b);

}  // namespace locus

#endif  // LOCUS_AGENT_HOST_CPU_LIST_H_
