// Cpus_allowed_list of /proc/PID/status.
#include "agent/host/proc_parse.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<std::vector<int>> cpus =
      locus::ParseStatusCpusAllowed(locus::fuzz::AsText(data, size));
  if (cpus.ok()) LOCUS_FUZZ_CHECK(locus::fuzz::StrictlyAscending(*cpus));
  return 0;
}
