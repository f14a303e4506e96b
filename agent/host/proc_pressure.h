// How hard the CPUs are wanted: each CPU's busy time from every task
// (/proc/stat) and each target thread's run-queue wait
// (/proc/PID/task/TID/schedstat), as per-tick figures on the snapshot.
//
// Why these files: the scheduler sensor's per-CPU busy time is sampled and
// counts only fair-class slices, and it is absent when BPF is; /proc/stat is
// the kernel's exact per-CPU account of everything. Run-queue wait is the
// one figure that says a worker is starved rather than merely busy; the
// kernel keeps it per task (sched_info, CONFIG_SCHED_INFO, on in Debian's
// kernels) whether or not kernel.sched_schedstats is on.
//
// Cost per tick: one read of /proc/stat (about 100 bytes per CPU) and one
// read of a ~30-byte file per target thread (the kernel prints three
// counters it keeps anyway). Only the targets' threads are read.
#ifndef LOCUS_AGENT_HOST_PROC_PRESSURE_H_
#define LOCUS_AGENT_HOST_PROC_PRESSURE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policy/snapshot.h"

namespace locus {

// One "cpuN ..." line of /proc/stat, in USER_HZ ticks.
struct CpuTimes {
  int cpu = -1;
  uint64_t busy = 0;   // user + nice + system + irq + softirq + steal
  uint64_t total = 0;  // busy + idle + iowait
};
// The per-CPU lines, in file order (the "cpu " total line is skipped);
// malformed lines are skipped, an error only when there is none at all.
absl::StatusOr<std::vector<CpuTimes>> ParseProcStatCpus(absl::string_view text);

// /proc/pressure/cpu (PSI): the "some" line's avg300, the share (0..1) of
// the last five minutes in which some runnable task waited for a CPU.
absl::StatusOr<double> ParseCpuPressureAvg300(absl::string_view text);

class PressureSampler {
 public:
  explicit PressureSampler(std::string procfs_root)
      : procfs_root_(std::move(procfs_root)) {}

  // Sets each CPU's busy_all and each target thread's wait_ns to their
  // growth since the previous call. A CPU or thread seen for the first time
  // starts its baseline (busy_all -1, wait 0 this tick). What could not be
  // read goes to `errors` as "<path>: <why>"; a thread that has exited is
  // not an error.
  void Sample(Snapshot* snapshot, std::vector<std::string>* errors);

 private:
  void SampleCpus(Snapshot* snapshot, std::vector<std::string>* errors);
  void SampleThreads(Snapshot* snapshot, std::vector<std::string>* errors);

  std::string procfs_root_;
  std::vector<CpuTimes> cpus_;                   // previous, by cpu
  absl::flat_hash_map<int32_t, uint64_t> wait_;  // previous wait, by tid
};

}  // namespace locus

#endif  // LOCUS_AGENT_HOST_PROC_PRESSURE_H_
