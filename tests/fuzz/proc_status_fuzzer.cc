// The fields of /proc/PID/status Locus reads: Cpus_allowed_list, Uid, the
// hex masks (SigIgn, CapEff) and the context switches; and the uid half of
// identifying a neighbour daemon (NotRootProblem, agent/host/target_trust.h).
#include "agent/host/proc_parse.h"
#include "agent/host/target_trust.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text = locus::fuzz::AsText(data, size);
  absl::StatusOr<std::vector<int>> cpus = locus::ParseStatusCpusAllowed(text);
  if (cpus.ok()) LOCUS_FUZZ_CHECK(locus::fuzz::StrictlyAscending(*cpus));
  absl::StatusOr<locus::StatusUids> uids = locus::ParseStatusUids(text);
  absl::StatusOr<uint32_t> real = locus::ParseStatusRealUid(text);
  // One reading of the Uid line: the real uid is the pair's first.
  LOCUS_FUZZ_CHECK(uids.ok() == real.ok());
  if (uids.ok()) {
    LOCUS_FUZZ_CHECK(uids->real == *real);
    LOCUS_FUZZ_CHECK(locus::ParseStatusValues(text, "Uid").size() >= 2);
  }
  // Root only when both uids parsed and are 0: a line cut short, a
  // negative or overlong number, a missing line is never root.
  const bool root = locus::NotRootProblem(text).empty();
  LOCUS_FUZZ_CHECK(root ==
                   (uids.ok() && uids->real == 0 && uids->effective == 0));
  for (absl::string_view key : {"SigIgn", "CapEff"}) {
    absl::StatusOr<uint64_t> mask = locus::ParseStatusMask(text, key);
    // A mask is one value on its line: whatever parsed came from there.
    if (mask.ok()) {
      LOCUS_FUZZ_CHECK(locus::ParseStatusValues(text, key).size() == 1);
    }
  }
  // Context switches: each count is the one value on its line.
  absl::StatusOr<locus::StatusSwitches> switches =
      locus::ParseStatusSwitches(text);
  if (switches.ok()) {
    for (absl::string_view key :
         {"voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"}) {
      LOCUS_FUZZ_CHECK(locus::ParseStatusValues(text, key).size() == 1);
    }
  }
  return 0;
}
