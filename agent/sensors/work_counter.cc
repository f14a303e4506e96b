#include "agent/sensors/work_counter.h"

#include <unistd.h>

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/host/file_util.h"
#include "agent/host/proc_parse.h"
#include "common/status_macros.h"

namespace locus {
namespace {

// "what: message", keeping the code: the caller learns which file.
absl::Status Annotate(const absl::Status& status, absl::string_view what) {
  return absl::Status(status.code(),
                      absl::StrCat(what, ": ", status.message()));
}

std::string PidDir(absl::string_view procfs_root, int32_t pid) {
  return JoinPath(procfs_root, absl::StrCat(pid));
}

// stat of a live process (NotFound for a zombie: it has exited).
absl::StatusOr<ProcStat> ReadLiveStat(absl::string_view procfs_root,
                                      int32_t pid) {
  std::string path = JoinPath(PidDir(procfs_root, pid), "stat");
  ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  absl::StatusOr<ProcStat> parsed = ParseProcStat(text);
  if (!parsed.ok()) return Annotate(parsed.status(), path);
  if (parsed->state == 'Z' || parsed->state == 'X') {
    return absl::NotFoundError(absl::StrCat(path, ": process exited"));
  }
  return parsed;
}

uint64_t TicksToNs(uint64_t ticks) {
  static const uint64_t ns_per_tick = [] {
    long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 ? 1000000000ull / static_cast<uint64_t>(hz) : 10000000ull;
  }();
  return ticks * ns_per_tick;
}

}  // namespace

absl::StatusOr<uint64_t> ParseIoWchar(absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, "wchar:")) continue;
    uint64_t wchar = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &wchar)) {
      return absl::InvalidArgumentError("bad wchar value");
    }
    return wchar;
  }
  return absl::DataLossError("no wchar line (truncated?)");
}

absl::StatusOr<ProcessCpu> ReadProcessCpu(absl::string_view procfs_root,
                                          int32_t pid) {
  ASSIGN_OR_RETURN(ProcStat stat, ReadLiveStat(procfs_root, pid));
  ProcessCpu out;
  out.start_time = stat.start_time;
  std::string task_dir = JoinPath(PidDir(procfs_root, pid), "task");
  ASSIGN_OR_RETURN(std::vector<std::string> tids, ListDirectory(task_dir));
  int read = 0;
  for (const std::string& tid : tids) {
    std::string path = JoinPath(task_dir, absl::StrCat(tid, "/schedstat"));
    absl::StatusOr<std::string> text = ReadTextFile(path);
    if (absl::IsNotFound(text.status())) continue;  // thread gone, or no file
    if (!text.ok()) return text.status();
    absl::StatusOr<Schedstat> stat = ParseSchedstat(*text);
    if (!stat.ok()) return Annotate(stat.status(), path);
    out.cpu_ns += stat->run_ns;
    out.wait_ns += stat->wait_ns;
    ++read;
    path = JoinPath(task_dir, absl::StrCat(tid, "/status"));
    text = ReadTextFile(path);
    if (absl::IsNotFound(text.status())) continue;  // exited meanwhile
    if (!text.ok()) return text.status();
    absl::StatusOr<StatusSwitches> switches = ParseStatusSwitches(*text);
    if (!switches.ok()) return Annotate(switches.status(), path);
    out.voluntary_switches += switches->voluntary;
    out.involuntary_switches += switches->involuntary;
  }
  if (read > 0) return out;
  // No schedstat at all: the kernel's tick-sampled times, which also hold
  // the threads that have exited.
  out.cpu_ns = TicksToNs(stat.cpu_ticks);
  return out;
}

absl::StatusOr<uint64_t> ReadProcessWchar(absl::string_view procfs_root,
                                          int32_t pid) {
  std::string path = JoinPath(PidDir(procfs_root, pid), "io");
  ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  absl::StatusOr<uint64_t> wchar = ParseIoWchar(text);
  if (!wchar.ok()) return Annotate(wchar.status(), path);
  return wchar;
}

absl::StatusOr<WatchedProcesses::Change> WatchedProcesses::Replace(
    const std::vector<int32_t>& pids) {
  Change change;
  absl::flat_hash_map<int32_t, uint64_t> next;
  for (int32_t pid : pids) {
    if (next.contains(pid)) continue;
    absl::StatusOr<ProcStat> stat = ReadLiveStat(procfs_root_, pid);
    if (absl::IsNotFound(stat.status())) continue;  // not alive: left out
    if (!stat.ok()) return stat.status();
    next[pid] = stat->start_time;
    auto it = start_time_.find(pid);
    if (it != start_time_.end() && it->second == stat->start_time) continue;
    if (it != start_time_.end()) change.dropped.push_back(pid);  // reused
    change.added.push_back(pid);
  }
  for (const auto& [pid, start] : start_time_) {
    if (!next.contains(pid)) change.dropped.push_back(pid);
  }
  start_time_ = std::move(next);
  return change;
}

absl::StatusOr<absl::flat_hash_map<int32_t, WorkSample>>
WatchedProcesses::ReadCpu() const {
  absl::flat_hash_map<int32_t, WorkSample> cpu;
  for (const auto& [pid, start] : start_time_) {
    absl::StatusOr<ProcessCpu> now = ReadProcessCpu(procfs_root_, pid);
    if (absl::IsNotFound(now.status())) continue;  // exited
    if (!now.ok()) return now.status();
    if (now->start_time != start) continue;  // exited, pid reused
    WorkSample& sample = cpu[pid];
    sample.cpu_ns = now->cpu_ns;
    sample.wait_ns = now->wait_ns;
    sample.voluntary_switches = now->voluntary_switches;
    sample.involuntary_switches = now->involuntary_switches;
  }
  return cpu;
}

namespace {

// bytes_sent = growth of wchar since the process was first watched.
class ProcfsWorkCounter : public WorkCounter {
 public:
  ProcfsWorkCounter(const WorkCounterOptions& options, absl::string_view why)
      : watched_(options.procfs_root),
        source_(why.empty() ? std::string(kWorkSourceProcfs)
                            : absl::StrCat(kWorkSourceProcfs, "; ", why)) {}

  absl::Status Watch(const std::vector<int32_t>& pids) override {
    ASSIGN_OR_RETURN(WatchedProcesses::Change change, watched_.Replace(pids));
    for (int32_t pid : change.dropped) baseline_.erase(pid);
    for (int32_t pid : change.added) {
      absl::StatusOr<uint64_t> wchar =
          ReadProcessWchar(watched_.procfs_root(), pid);
      // Gone since Replace looked: Read will leave it out.
      baseline_[pid] = wchar.ok() ? *wchar : 0;
      if (!wchar.ok() && !absl::IsNotFound(wchar.status())) {
        return wchar.status();
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<absl::flat_hash_map<int32_t, WorkSample>> Read() override {
    ASSIGN_OR_RETURN(auto cpu, watched_.ReadCpu());
    absl::flat_hash_map<int32_t, WorkSample> out;
    for (auto& [pid, sample] : cpu) {
      absl::StatusOr<uint64_t> wchar =
          ReadProcessWchar(watched_.procfs_root(), pid);
      if (absl::IsNotFound(wchar.status())) continue;
      if (!wchar.ok()) return wchar.status();
      uint64_t base = baseline_[pid];
      sample.bytes_sent = *wchar > base ? *wchar - base : 0;
      out[pid] = std::move(sample);
    }
    return out;
  }

  void Stop() override {
    watched_.Clear();
    baseline_.clear();
  }

  std::string source() const override { return source_; }
  std::string service_source() const override {
    return "none: service times need the bpf work source (" + source_ + ")";
  }

 private:
  WatchedProcesses watched_;
  absl::flat_hash_map<int32_t, uint64_t> baseline_;
  std::string source_;
};

}  // namespace

std::unique_ptr<WorkCounter> MakeProcfsWorkCounter(
    const WorkCounterOptions& options, absl::string_view why) {
  return std::make_unique<ProcfsWorkCounter>(options, why);
}

}  // namespace locus
