// The processes Locus tunes, found by selectors, with their threads: by
// default nginx, master and workers told apart. Every scan starts from
// /proc afresh, so workers started by `nginx -s reload` appear in the first
// scan after it and the old ones (gone, or "is shutting down") drop out.
// A worker caught in the instant between fork and setting its title still
// reads "nginx: master process" and is reported as a master for that scan.
#ifndef LOCUS_AGENT_HOST_TARGETS_H_
#define LOCUS_AGENT_HOST_TARGETS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "agent/host/host_paths.h"
#include "agent/host/target_trust.h"
#include "policy/snapshot.h"

namespace locus {

// A process is selected when it matches any entry of any list. All lists
// empty selects nothing. The daemon maps the policy's selectors onto this.
struct TargetSelector {
  std::vector<std::string> comms;          // /proc/PID/comm, exact
  std::vector<std::string> exe_paths;      // readlink /proc/PID/exe, exact
  std::vector<std::string> cgroup_paths;   // prefix, whole components
  std::vector<std::string> systemd_units;  // e.g. "nginx.service"
  // Selected processes with these comms have thread workers: each thread of
  // such a process that is not a master is a target of its own
  // (Target::process), and the process is not.
  std::vector<std::string> thread_worker_comms;
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
  // With a cache, a process's thread list (with affinities) and numa_maps
  // are re-read at least every this many scans, and sooner when the process
  // is new, its thread count changed, or it was marked stale. 1: every
  // scan. Thread lists are never reused when read_thread_cpu is on (a
  // thread's CPU changes all the time).
  int refresh_every = 1;
  // Which of the selected processes may be acted on (target_trust.h); the
  // others are left out, each with its reason.
  TargetTrust trust;
};

// What scans may reuse from earlier ones: per selected process, its thread
// list and numa_maps and the scan that read them. numa_maps walks every
// page of a process and a thread list costs a syscall per thread, the two
// dominant costs of a scan, while both change rarely at steady state.
struct TargetScanCache {
  struct Entry {
    uint64_t start_time = 0;  // tells a reused pid from the old process
    int num_threads = 0;
    uint64_t threads_scan = 0;
    uint64_t numa_scan = 0;
    std::vector<ThreadSample> threads;
    std::vector<uint64_t> resident_pages;
  };
  uint64_t scan = 0;  // scans so far
  size_t nodes = 0;   // resident_pages are per node: a new topology resets
  std::map<int32_t, Entry> entries;
  // Processes to re-read fully at the next scan: ones the agent just acted
  // on, or whose threads moved to other nodes. Cleared by the scan.
  std::set<int32_t> stale;
  // Processes a comm selector ruled out by their comm, by the inode number
  // of their /proc directory (a reused pid has another). Reading every
  // process's comm each scan is most of a scan's syscalls on a busy host,
  // while names rarely change: these are not re-read while `names_tracked`,
  // that is while the owner erases, before each scan, every process that
  // may have been renamed since (exec, prctl; HostModel::NoteRenamed).
  absl::flat_hash_map<int32_t, uint64_t> ruled_out;
  bool names_tracked = false;
};

// Scans <procfs_root>/[0-9]*. A process or thread that vanishes mid-scan is
// skipped quietly (that is normal); a malformed or truncated file is
// reported in `errors` as "<path>: <why>" and only that item is skipped (or
// left without that part). Fails only when procfs_root cannot be listed.
// With `cache` (may be null), parts fresh enough are taken from it and it is
// updated for the next scan. Selected processes that are not trusted
// (options.trust) are left out and, with `refused` (may be null), listed
// there with the reason.
absl::StatusOr<std::vector<Target>> ScanTargets(
    const HostPaths& paths, const TargetScanOptions& options,
    const Topology& topology, std::vector<std::string>* errors,
    TargetScanCache* cache = nullptr,
    std::vector<RefusedTarget>* refused = nullptr);

}  // namespace locus

#endif  // LOCUS_AGENT_HOST_TARGETS_H_
