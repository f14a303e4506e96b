// Hex CPU masks ("ff,00000001": smp_affinity, Cpus_allowed).
#include "agent/host/cpu_mask.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<std::vector<int>> cpus =
      locus::ParseCpuMask(locus::fuzz::AsText(data, size));
  if (!cpus.ok()) return 0;
  LOCUS_FUZZ_CHECK(locus::fuzz::StrictlyAscending(*cpus));
  LOCUS_FUZZ_CHECK(cpus->empty() || cpus->back() < locus::kMaxCpuNumber);
  // The same set as a cpulist reads back equal.
  absl::StatusOr<std::vector<int>> listed =
      locus::ParseCpuList(locus::FormatCpuList(*cpus));
  LOCUS_FUZZ_CHECK(listed.ok() && *listed == *cpus);
  return 0;
}
