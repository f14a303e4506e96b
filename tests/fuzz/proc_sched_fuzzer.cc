// /proc/PID/task/TID/sched (the NUMA sensor's last-resort source).
#include "agent/sensors/proc_sched.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<locus::ProcSched> sched =
      locus::ParseProcSched(locus::fuzz::AsText(data, size));
  if (!sched.ok()) return 0;
  LOCUS_FUZZ_CHECK(sched->comm.size() < size);
  LOCUS_FUZZ_CHECK(sched->numa_faults.size() <= size);
  return 0;
}
