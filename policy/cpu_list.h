// The kernel's cpulist format ("0-3,8,10-11"), used by the policy file and in
// reasons, so that what a human reads matches /sys and /proc.
#ifndef LOCUS_POLICY_CPU_LIST_H_
#define LOCUS_POLICY_CPU_LIST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace locus {

// Parses a cpulist into ascending, distinct CPU numbers. "" (or only
// blanks, as a memory-only node's cpulist reads) is the empty list;
// surrounding blanks and the newline sysfs files end in are ignored. Rejects
// malformed text, reversed ranges, CPUs named twice and CPUs
// >= kMaxCpuNumber.
inline constexpr int kMaxCpuNumber = 8192;
absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view text);

// Formats CPUs (any order, duplicates allowed) as the kernel does:
// {8,0,1,2,3} -> "0-3,8".
std::string FormatCpuList(std::vector<int> cpus);

}  // namespace locus

#endif  // LOCUS_POLICY_CPU_LIST_H_
