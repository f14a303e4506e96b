// /proc/PID/stat and /proc/PID/task/TID/stat.
#include "agent/host/proc_parse.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<locus::ProcStat> stat =
      locus::ParseProcStat(locus::fuzz::AsText(data, size));
  if (!stat.ok()) return 0;
  // comm is the text between the first '(' and the last ')'.
  LOCUS_FUZZ_CHECK(stat->comm.size() + 2 <= size);
  return 0;
}
