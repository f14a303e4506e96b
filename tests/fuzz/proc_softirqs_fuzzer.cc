// /proc/softirqs (the softirq counts when the hooks run in windows).
#include "agent/sensors/proc_softirqs.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<std::vector<locus::SoftirqCounts>> counts =
      locus::ParseProcSoftirqs(locus::fuzz::AsText(data, size));
  if (!counts.ok()) return 0;
  // One slot per CPU id up to the highest the header names, which the
  // parser caps: a header cannot make it allocate without bound.
  LOCUS_FUZZ_CHECK(!counts->empty() && counts->size() <= 8192);
  return 0;
}
