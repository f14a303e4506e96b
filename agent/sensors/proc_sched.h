// /proc/PID/task/TID/sched: the NUMA sensor's last-resort source, and
// kernel.numa_balancing. The text format is kernel/sched/debug.c's
// proc_sched_show_task (+ fair.c print_numa_stats), which gains and loses
// lines between versions, so the parser keys on names and ignores the rest.
#ifndef LOCUS_AGENT_SENSORS_PROC_SCHED_H_
#define LOCUS_AGENT_SENSORS_PROC_SCHED_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace locus {

struct ProcSchedNodeFaults {
  int node = 0;
  uint64_t task_private = 0;
  uint64_t task_shared = 0;
  uint64_t group_private = 0;
  uint64_t group_shared = 0;
};

struct ProcSched {
  std::string comm;
  int32_t pid = 0;  // as printed in the header: the task's id in its ns
  // Every "name : value" line, verbatim value text ("se.nr_migrations" ...).
  std::map<std::string, std::string> fields;
  int64_t nr_migrations = -1;       // se.nr_migrations, -1 if absent
  int64_t numa_preferred_nid = -1;  // -1 if absent
  int64_t total_numa_faults = -1;   // -1 if absent (no NUMA_BALANCING)
  int current_node = -1;
  std::vector<ProcSchedNodeFaults> numa_faults;  // "numa_faults node=" lines
};

// Parses one file's text. Fails only when the header line is missing.
absl::StatusOr<ProcSched> ParseProcSched(absl::string_view text);

// One task found under <procfs_root>/<pid>/task/<tid>/sched.
struct ProcTaskSched {
  int32_t pid = 0;
  int32_t tid = 0;
  ProcSched sched;
};

// Reads every task's sched file; tasks that vanish or fail to parse while
// walking are skipped and counted in *skipped.
std::vector<ProcTaskSched> ReadAllProcSched(absl::string_view procfs_root,
                                            uint64_t* skipped);

// <procfs_root>/sys/kernel/numa_balancing: its value, -1 when absent or
// not a number >= 0.
int ReadNumaBalancingMode(absl::string_view procfs_root);

// ReadNumaBalancingMode() > 0: absent file, false.
bool ReadNumaBalancing(absl::string_view procfs_root);

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_PROC_SCHED_H_
