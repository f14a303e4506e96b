// The processes Locus tunes, found by selectors, with their threads: by
// default nginx, master and workers told apart. Every scan starts from
// /proc afresh, so workers started by `nginx -s reload` appear in the first
// scan after it and the old ones (gone, or "is shutting down") drop out.
// A worker caught in the instant between fork and setting its title still
// reads "nginx: master process" and is reported as a master for that scan.
#ifndef LOCUS_AGENT_HOST_TARGETS_H_
#define LOCUS_AGENT_HOST_TARGETS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/host/host_paths.h"
#include "policy/snapshot.h"

namespace locus {

// A process is selected when it matches any entry of any list. All lists
// empty selects nothing. The daemon maps the policy's selectors onto this.
struct TargetSelector {
  std::vector<std::string> comms;          // /proc/PID/comm, exact
  std::vector<std::string> exe_paths;      // readlink /proc/PID/exe, exact
  std::vector<std::string> cgroup_paths;   // prefix, whole components
  std::vector<std::string> systemd_units;  // e.g. "nginx.service"
};

// The default: nginx.
TargetSelector NginxSelector();

struct TargetScanOptions {
  TargetSelector selector = NginxSelector();
  bool read_threads = true;  // per-thread CPU and affinity
  // Each thread's current CPU from /proc/PID/task/TID/stat. The BPF sensors
  // know it already; without them this is the only source. Off, a scan
  // reads one file per thread instead of two.
  bool read_thread_cpu = true;
  // Reads one thread's affinity into `cpus`; returns 0 or an errno. Unset:
  // parsed from /proc/PID/task/TID/status (what fixture trees provide). The
  // daemon passes sched_getaffinity(2), which costs the kernel far less than
  // formatting a status file for every target thread each tick.
  std::function<int(int32_t tid, std::vector<int>* cpus)> read_affinity;
  bool read_numa_maps = true;  // resident pages per node
  // Workers that are draining after a reload ("nginx: worker process is
  // shutting down") are left out: they are about to exit.
  bool skip_draining = true;
};

// Scans <procfs_root>/[0-9]*. A process or thread that vanishes mid-scan is
// skipped quietly (that is normal); a malformed or truncated file is
// reported in `errors` as "<path>: <why>" and only that item is skipped (or
// left without that part). Fails only when procfs_root cannot be listed.
absl::StatusOr<std::vector<Target>> ScanTargets(
    const HostPaths& paths, const TargetScanOptions& options,
    const Topology& topology, std::vector<std::string>* errors);

}  // namespace locus

#endif  // LOCUS_AGENT_HOST_TARGETS_H_
