// The kernel's cpulist text (sysfs node and cpu files, smp_affinity_list,
// Cpus_allowed_list, the policy file, the journal).
#include "fuzz_check.h"
#include "policy/cpu_list.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using locus::fuzz::StrictlyAscending;
  absl::StatusOr<std::vector<int>> cpus =
      locus::ParseCpuList(locus::fuzz::AsText(data, size));
  if (!cpus.ok()) return 0;
  LOCUS_FUZZ_CHECK(StrictlyAscending(*cpus));
  LOCUS_FUZZ_CHECK(cpus->empty() || cpus->back() < locus::kMaxCpuNumber);
  // What Locus writes (journal, smp_affinity_list) reads back the same.
  absl::StatusOr<std::vector<int>> again =
      locus::ParseCpuList(locus::FormatCpuList(*cpus));
  LOCUS_FUZZ_CHECK(again.ok() && *again == *cpus);
  return 0;
}
