// The A/B experiment's work sensor: per nginx worker, the bytes it sent on
// its sockets, the connections it accepted and the CPU time its threads
// used, all as the kernel already counts them (no nginx module). The
// experiment divides work by CPU time per interval.
//
// Two sources: bpf/work.bpf.c (exact socket sends and accepts, and each
// request's service time, see work_counter_bpf.h for the factory that
// prefers it) and /proc/PID/io's wchar (file writes included, accepts and
// requests not counted). CPU time is read from /proc by both.
#ifndef LOCUS_AGENT_SENSORS_WORK_COUNTER_H_
#define LOCUS_AGENT_SENSORS_WORK_COUNTER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/defaults.h"

namespace locus {

// Cumulative figures of one process.
struct WorkSample {
  uint64_t bytes_sent = 0;
  uint64_t accepted = 0;
  uint64_t cpu_ns = 0;
  // Its threads' time runnable but waiting for a CPU (the second field of
  // schedstat), and their context switches: voluntary (it blocked) and
  // involuntary (the scheduler took the CPU away), from /proc by both
  // counters.
  uint64_t wait_ns = 0;
  uint64_t voluntary_switches = 0;
  uint64_t involuntary_switches = 0;
  // Requests served, and their service times (from a request's first byte
  // read to its response's last byte sent) as cumulative counts per bucket
  // of locus_work_bucket (bpf/include/locus/work.h); the bpf counter only:
  // `service_us` is empty where requests are not seen.
  uint64_t requests = 0;
  std::vector<uint64_t> service_us = {};

  friend bool operator==(const WorkSample&, const WorkSample&) = default;
};

class WorkCounter {
 public:
  virtual ~WorkCounter() = default;
  // Counts for exactly these processes from now on (replaces the set; a pid
  // dropped is forgotten, a pid kept keeps its counts). A pid not alive now
  // is left out. An empty set is Stop().
  virtual absl::Status Watch(const std::vector<int32_t>& pids) = 0;
  // Per watched pid still alive: bytes_sent and accepted since it was first
  // watched (requests too, where seen), and its threads' CPU time, waits
  // and context switches as the kernel counts them now. A pid that exited
  // (or was reused by another process) is absent.
  virtual absl::StatusOr<absl::flat_hash_map<int32_t, WorkSample>> Read() = 0;
  // Detaches and forgets (no cost while no experiment runs).
  virtual void Stop() = 0;
  // Where bytes_sent and accepted come from, for the report.
  virtual std::string source() const = 0;
  // Where requests' service times come from, or why there are none.
  virtual std::string service_source() const = 0;
};

struct WorkCounterOptions {
  std::string procfs_root = kDefaultProcfsRoot;
  bool disable_bpf = false;
};

inline constexpr char kWorkSourceBpf[] =
    "bpf: socket sends and accepts per process";
inline constexpr char kWorkSourceProcfs[] =
    "procfs: wchar of /proc/PID/io (file writes included; accepts not "
    "counted)";

inline constexpr char kServiceSourceBpf[] =
    "bpf: per connection, from a request's first byte read to its "
    "response's last byte sent";

// The /proc fallback; `why` (may be empty) is appended to source(), e.g.
// "bpf unavailable: loading work: Operation not permitted".
std::unique_ptr<WorkCounter> MakeProcfsWorkCounter(
    const WorkCounterOptions& options, absl::string_view why);

// --- /proc readers, shared by both counters (unit-tested over fixtures) ---

// What identifies a process, what CPU time it used and how it waited.
struct ProcessCpu {
  uint64_t start_time = 0;  // /proc/PID/stat field 22: tells a reused pid
  uint64_t cpu_ns = 0;
  uint64_t wait_ns = 0;
  uint64_t voluntary_switches = 0;
  uint64_t involuntary_switches = 0;
};

// <procfs_root>/PID: start time from stat, CPU time and run-queue wait as
// the sums of the first two fields of task/*/schedstat (sum_exec_runtime and
// run_delay, ns), context switches as the sums of task/*/status; where no
// thread has a schedstat file (CONFIG_SCHED_INFO off), CPU time is stat's
// utime + stime in clock ticks and the wait 0. NotFound when the process is
// gone or a zombie; InvalidArgument or DataLoss, naming the file, when a
// file does not parse. A thread that exits between the listing and its read
// is left out of the sums.
absl::StatusOr<ProcessCpu> ReadProcessCpu(absl::string_view procfs_root,
                                          int32_t pid);

// wchar of <procfs_root>/PID/io (bytes passed to write-like syscalls that
// go through the VFS: write, writev, sendfile, not send/sendto/sendmsg).
absl::StatusOr<uint64_t> ReadProcessWchar(absl::string_view procfs_root,
                                          int32_t pid);

// The watched set both counters keep: each pid with the start time it had
// when first watched, so that a pid reused by another process reads as
// exited rather than as the same worker.
class WatchedProcesses {
 public:
  explicit WatchedProcesses(std::string procfs_root)
      : procfs_root_(std::move(procfs_root)) {}

  struct Change {
    std::vector<int32_t> dropped;  // apply first: a reused pid is in both
    std::vector<int32_t> added;
  };
  // Replaces the set with the pids of `pids` alive now. A pid kept is
  // unchanged unless it now names another process (then dropped and added).
  absl::StatusOr<Change> Replace(const std::vector<int32_t>& pids);
  void Clear() { start_time_.clear(); }
  bool empty() const { return start_time_.empty(); }

  // CPU time and waits of each watched pid still alive and still the same
  // process, as a sample whose work the caller fills in.
  absl::StatusOr<absl::flat_hash_map<int32_t, WorkSample>> ReadCpu() const;

  const std::string& procfs_root() const { return procfs_root_; }
  // pid -> start time (/proc/PID/stat field 22) when first watched.
  const absl::flat_hash_map<int32_t, uint64_t>& start_times() const {
    return start_time_;
  }

 private:
  std::string procfs_root_;
  absl::flat_hash_map<int32_t, uint64_t> start_time_;
};

// The "wchar:" line of an io file.
absl::StatusOr<uint64_t> ParseIoWchar(absl::string_view text);

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_WORK_COUNTER_H_
