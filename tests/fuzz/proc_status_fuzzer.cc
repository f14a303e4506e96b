// The fields of /proc/PID/status Locus reads: Cpus_allowed_list, Uid and
// the hex masks (SigIgn, CapEff).
#include "agent/host/proc_parse.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text = locus::fuzz::AsText(data, size);
  absl::StatusOr<std::vector<int>> cpus = locus::ParseStatusCpusAllowed(text);
  if (cpus.ok()) LOCUS_FUZZ_CHECK(locus::fuzz::StrictlyAscending(*cpus));
  (void)locus::ParseStatusRealUid(text);
  for (absl::string_view key : {"SigIgn", "CapEff"}) {
    absl::StatusOr<uint64_t> mask = locus::ParseStatusMask(text, key);
    // A mask is one value on its line: whatever parsed came from there.
    if (mask.ok()) {
      LOCUS_FUZZ_CHECK(locus::ParseStatusValues(text, key).size() == 1);
    }
  }
  return 0;
}
