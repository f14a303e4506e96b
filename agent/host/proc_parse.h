// Parsers for per-process and per-thread procfs files. Pure functions on
// text so each is table-testable; errors say what was wrong, the caller adds
// the file name.
#ifndef LOCUS_AGENT_HOST_PROC_PARSE_H_
#define LOCUS_AGENT_HOST_PROC_PARSE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace locus {

// The fields of /proc/PID/stat (or /proc/PID/task/TID/stat) Locus uses.
struct ProcStat {
  int32_t pid = 0;
  std::string comm;  // without the parentheses; may contain spaces or ')'
  char state = '?';
  int32_t ppid = 0;
  int num_threads = 0;      // field 20
  uint64_t cpu_ticks = 0;   // utime + stime (fields 14 and 15), clock ticks
  uint64_t start_time = 0;  // field 22, clock ticks since boot
  int processor = -1;       // field 39, CPU it last ran on
};
absl::StatusOr<ProcStat> ParseProcStat(absl::string_view text);

// /proc/PID/task/TID/schedstat: "on-CPU ns, run-queue wait ns, timeslices"
// (the experiment's CPU time, the soft home's run-queue wait).
struct Schedstat {
  uint64_t run_ns = 0;
  uint64_t wait_ns = 0;
  uint64_t slices = 0;
};
absl::StatusOr<Schedstat> ParseSchedstat(absl::string_view text);

// Cpus_allowed_list from /proc/PID/status.
absl::StatusOr<std::vector<int>> ParseStatusCpusAllowed(absl::string_view text);

// The values of the line "KEY:\t..." of /proc/PID/status (`key` without the
// colon), split on blanks; empty when there is no such line. Every reader of
// a status field goes through it.
std::vector<absl::string_view> ParseStatusValues(absl::string_view text,
                                                 absl::string_view key);

// A hex mask line of /proc/PID/status: SigIgn, SigBlk, CapEff, ...
absl::StatusOr<uint64_t> ParseStatusMask(absl::string_view text,
                                         absl::string_view key);

// The real and effective uids of /proc/PID/status's
// "Uid:\treal\teffective\tsaved\tfs" line.
struct StatusUids {
  uint32_t real = 0;
  uint32_t effective = 0;
};
absl::StatusOr<StatusUids> ParseStatusUids(absl::string_view text);

// The context switches of /proc/PID/task/TID/status: voluntary (the thread
// blocked) and involuntary (the scheduler preempted it).
struct StatusSwitches {
  uint64_t voluntary = 0;
  uint64_t involuntary = 0;
};
absl::StatusOr<StatusSwitches> ParseStatusSwitches(absl::string_view text);

// The real uid (of ParseStatusUids): who started the process, which
// setuid() in it cannot fake upwards.
absl::StatusOr<uint32_t> ParseStatusRealUid(absl::string_view text);

// /proc/PID/cmdline's NUL-separated arguments, trailing NULs dropped.
std::vector<std::string> ParseCmdlineArgs(absl::string_view text);
// The same joined with spaces (nginx rewrites its argv to "nginx: worker
// process").
std::string ParseCmdline(absl::string_view text);

// One line of /proc/PID/cgroup, "hierarchy-ID:controller-list:cgroup-path"
// ("0::/system.slice/x.service" for v2, "3:cpuset:/pinned" for v1). The
// path is everything after the second ':' (a directory name may hold one).
// Views into the parsed text.
struct CgroupLine {
  absl::string_view hierarchy;
  absl::string_view controllers;
  absl::string_view path;
};
std::vector<CgroupLine> ParseCgroupLines(absl::string_view text);

// The process's cgroup path from /proc/PID/cgroup: the cgroup v2 ("0::")
// line, else the v1 name=systemd line; "" when neither is present.
std::string ParseCgroupPath(absl::string_view text);

// The unit of the system's service manager a cgroup path lies in: the first
// component below the slices, when it is a service or scope
// ("/system.slice/nginx.service/workers" -> "nginx.service"). Never a name
// further down: below a unit the cgroups may be delegated, and a user's own
// manager ("/user.slice/user-1000.slice/user@1000.service/app.slice/
// nginx.service") or a container may name one anything; that path lies in
// "user@1000.service". "" when no such unit holds it (a path outside
// locusd's cgroup namespace, "/../x.service", included).
std::string SystemdUnitOf(absl::string_view cgroup_path);

// Whether `unit` is a user's service manager (user@UID.service), which
// holds whatever that user starts.
bool IsUserManagerUnit(absl::string_view unit);

// Who holds the flock(2) on a file, from /proc/locks: the pid of its
// granted FLOCK line for device `dev_major`:`dev_minor`, inode `inode`;
// nullopt when none is listed (waiters, "->", are not holders).
std::optional<int32_t> ParseFlockHolder(absl::string_view proc_locks,
                                        uint32_t dev_major, uint32_t dev_minor,
                                        uint64_t inode);

// An address range of a process worth migrating (private writable memory).
struct MemRange {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
};

// The private writable mappings of /proc/PID/maps, in file order (ascending
// on a kernel), except [vvar]-style specials and mappings larger than
// `max_bytes`; with `numa_maps` (the same process's /proc/PID/numa_maps) only
// those it shows resident pages for. Lines that do not parse are skipped.
std::vector<MemRange> ParseMigratableRanges(
    absl::string_view maps, std::optional<absl::string_view> numa_maps,
    uint64_t max_bytes);

}  // namespace locus

#endif  // LOCUS_AGENT_HOST_PROC_PARSE_H_
