#include "agent/host/targets.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/host/file_util.h"
#include "agent/host/numa_maps.h"
#include "agent/host/proc_parse.h"
#include "agent/host/thread_workers.h"
#include "common/os_error.h"
#include "common/status_macros.h"

namespace locus {
namespace {

struct Candidate {
  ProcStat stat;
  std::string cmdline;
};

bool IsNumber(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
}

// Whether a read succeeded; its failure is reported unless the task exited
// mid-scan (ENOENT or ESRCH, both NotFound), which is normal.
bool ReadOk(const absl::Status& status, std::vector<std::string>* errors) {
  if (status.ok()) return true;
  if (!absl::IsNotFound(status)) {
    errors->push_back(std::string(status.message()));
  }
  return false;
}

bool CgroupUnder(absl::string_view path, absl::string_view prefix) {
  while (prefix.size() > 1 && prefix.back() == '/') prefix.remove_suffix(1);
  if (!absl::StartsWith(path, prefix)) return false;
  return path.size() == prefix.size() || prefix == "/" ||
         path[prefix.size()] == '/';
}

bool Contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

TargetRole RoleFromCmdline(const std::string& cmdline) {
  if (absl::StartsWith(cmdline, "nginx: master process")) {
    return TargetRole::kMaster;
  }
  if (absl::StartsWith(cmdline, "nginx: worker process")) {
    return TargetRole::kWorker;
  }
  return TargetRole::kOther;
}

// <dir>/stat, or nullopt: the task is gone (quietly) or the file is bad
// (reported in `errors`).
std::optional<ProcStat> ReadStat(const std::string& dir,
                                 std::vector<std::string>* errors) {
  const std::string path = JoinPath(dir, "stat");
  auto text = ReadTextFile(path);
  if (!ReadOk(text.status(), errors)) return std::nullopt;
  auto stat = ParseProcStat(*text);
  if (!stat.ok()) {
    errors->push_back(absl::StrCat(path, ": ", stat.status().message()));
    return std::nullopt;
  }
  return *std::move(stat);
}

// The thread's affinity from its status file; false when it is gone.
bool ReadStatusAffinity(const std::string& dir, ThreadSample* thread,
                        std::vector<std::string>* errors) {
  const std::string status_path = JoinPath(dir, "status");
  auto status_text = ReadTextFile(status_path);
  if (!ReadOk(status_text.status(), errors)) {
    return !absl::IsNotFound(status_text.status());
  }
  auto allowed = ParseStatusCpusAllowed(*status_text);
  if (allowed.ok()) {
    thread->allowed_cpus = *std::move(allowed);
  } else {
    errors->push_back(
        absl::StrCat(status_path, ": ", allowed.status().message()));
  }
  return true;
}

void ReadThreads(const std::string& proc_dir, const TargetScanOptions& options,
                 Target* target, std::vector<std::string>* errors) {
  const std::string task_dir = JoinPath(proc_dir, "task");
  auto tids = ListDirectory(task_dir);
  if (!ReadOk(tids.status(), errors)) return;
  for (const std::string& name : *tids) {
    if (!IsNumber(name)) continue;
    const std::string dir = JoinPath(task_dir, name);
    ThreadSample thread;
    if (options.read_thread_cpu) {
      std::optional<ProcStat> stat = ReadStat(dir, errors);
      if (!stat) continue;
      thread.cpu = stat->processor;
    }
    if (!absl::SimpleAtoi(name, &thread.tid)) continue;
    if (options.read_affinity) {
      int err = options.read_affinity(thread.tid, &thread.allowed_cpus);
      if (err == ESRCH) continue;  // the thread exited mid-scan
      if (err != 0) {
        errors->push_back(ErrnoMessage(
            absl::StrCat("thread ", thread.tid, ": sched_getaffinity"), err));
      }
    } else if (!ReadStatusAffinity(dir, &thread, errors)) {
      continue;  // the thread exited mid-scan
    }
    target->threads.push_back(std::move(thread));
  }
  std::sort(target->threads.begin(), target->threads.end(),
            [](const ThreadSample& a, const ThreadSample& b) {
              return a.tid < b.tid;
            });
}

void ReadResidentPages(const std::string& dir, const Topology& topology,
                       uint64_t page_size, Target* target,
                       std::vector<std::string>* errors) {
  const std::string maps_path = JoinPath(dir, "numa_maps");
  auto text = ReadTextFile(maps_path);
  if (!ReadOk(text.status(), errors)) return;
  auto pages = ParseNumaMaps(*text, topology, page_size);
  if (!pages.ok()) {
    errors->push_back(absl::StrCat(maps_path, ": ", pages.status().message()));
    return;
  }
  target->resident_pages.assign(pages->begin(), pages->end());
}

// What the selection found: the selected processes by pid, and those a comm
// selector ruled out by their comm (pid -> inode of their /proc directory).
struct Selection {
  std::map<int32_t, Candidate> selected;
  absl::flat_hash_map<int32_t, uint64_t> ruled_out;
};

// Whether a comm-only selector rules the process out by its comm: known from
// an earlier scan (same /proc inode) or read now. Either is recorded.
bool RuledOutByComm(const DirEntry& entry, int32_t pid, const std::string& dir,
                    const TargetSelector& sel, const TargetScanCache* cache,
                    Selection* out) {
  if (cache != nullptr && cache->names_tracked) {
    auto known = cache->ruled_out.find(pid);
    if (known != cache->ruled_out.end() && known->second == entry.inode) {
      out->ruled_out.emplace(pid, entry.inode);
      return true;
    }
  }
  auto comm = ReadTextFile(JoinPath(dir, "comm"));
  if (comm.ok() &&
      !Contains(sel.comms,
                std::string(absl::StripTrailingAsciiWhitespace(*comm)))) {
    out->ruled_out.emplace(pid, entry.inode);
    return true;
  }
  return false;
}

// Whether the process in `dir`, whose stat is `stat`, is selected.
bool Matches(const TargetSelector& sel, const std::string& dir,
             const ProcStat& stat) {
  if (Contains(sel.comms, stat.comm)) return true;
  if (!sel.exe_paths.empty() && Contains(sel.exe_paths, ExecutablePath(dir))) {
    return true;
  }
  if (sel.cgroup_paths.empty() && sel.systemd_units.empty()) return false;
  auto cgroup = ReadTextFile(JoinPath(dir, "cgroup"));
  if (!cgroup.ok()) return false;
  const std::string path = ParseCgroupPath(*cgroup);
  if (path.empty()) return false;
  for (const std::string& prefix : sel.cgroup_paths) {
    if (CgroupUnder(path, prefix)) return true;
  }
  return Contains(sel.systemd_units, SystemdUnitOf(path));
}

Selection SelectProcesses(const std::vector<DirEntry>& entries,
                          const std::string& procfs_root,
                          const TargetSelector& sel,
                          const TargetScanCache* cache,
                          std::vector<std::string>* errors) {
  // Only comm can select most processes, and their comm file costs the
  // kernel far less to format than stat: it alone rules them out.
  const bool comm_only = sel.exe_paths.empty() && sel.cgroup_paths.empty() &&
                         sel.systemd_units.empty();
  Selection out;
  for (const DirEntry& entry : entries) {
    int32_t pid = 0;
    if (!IsNumber(entry.name) || !absl::SimpleAtoi(entry.name, &pid)) continue;
    const std::string dir = JoinPath(procfs_root, entry.name);
    if (comm_only && RuledOutByComm(entry, pid, dir, sel, cache, &out)) {
      continue;
    }
    // The fields wanted (comm, state, ppid, start time, thread count) are
    // the leader thread's too, and its own task/PID/stat costs the kernel no
    // walk over every thread, as PID/stat does (summing CPU times and faults:
    // the largest kernel cost of a scan at 1000 threads).
    std::optional<ProcStat> stat =
        ReadStat(JoinPath(dir, absl::StrCat("task/", entry.name)), errors);
    if (!stat) continue;
    if (stat->state == 'Z') continue;  // zombies have no threads to place
    if (!Matches(sel, dir, *stat)) continue;
    Candidate candidate;
    auto cmdline = ReadTextFile(JoinPath(dir, "cmdline"));
    if (cmdline.ok()) candidate.cmdline = ParseCmdline(*cmdline);
    candidate.stat = *std::move(stat);
    out.selected.emplace(candidate.stat.pid, std::move(candidate));
  }
  return out;
}

// nginx names every process it forks ("nginx: cache manager process" is
// neither); parentage decides only for programs that do not: a selected
// parent of selected children is the master, a selected child of a selected
// parent a worker.
// The topmost selected process above `pid` (itself when its parent is not
// selected): the master whose owner vouches for its workers.
int32_t MasterOf(int32_t pid, const std::map<int32_t, Candidate>& selected) {
  // Bounded: a pid loop cannot occur in /proc, but a fixture can have one.
  for (size_t hops = 0; hops < selected.size(); ++hops) {
    auto parent = selected.find(selected.at(pid).stat.ppid);
    if (parent == selected.end() || parent->first == pid) break;
    pid = parent->first;
  }
  return pid;
}

TargetRole RoleOf(const Candidate& candidate,
                  const std::map<int32_t, Candidate>& selected,
                  const std::set<int32_t>& parents, bool thread_workers) {
  // A server of thread workers run alone (HAProxy without -W) has no
  // master: the process is its workers' own.
  if (thread_workers) {
    return parents.count(candidate.stat.pid) ? TargetRole::kMaster
                                             : TargetRole::kWorker;
  }
  if (!absl::StartsWith(candidate.cmdline, "nginx: ")) {
    if (parents.count(candidate.stat.pid)) return TargetRole::kMaster;
    if (selected.count(candidate.stat.ppid)) return TargetRole::kWorker;
  }
  return RoleFromCmdline(candidate.cmdline);
}

// Reads the process's threads and resident pages into `target`, or takes
// them from `cache` (may be null) where they are recent enough.
void ReadTargetParts(const std::string& dir, const Candidate& candidate,
                     const TargetScanOptions& options, const Topology& topology,
                     bool thread_workers, TargetScanCache* cache,
                     Target* target, std::vector<std::string>* errors) {
  TargetScanCache::Entry* cached = nullptr;
  bool fresh = false;  // the cache's entry is this very process
  if (cache != nullptr) {
    cached = &cache->entries[candidate.stat.pid];
    fresh = cached->start_time == candidate.stat.start_time &&
            !cache->stale.contains(candidate.stat.pid);
    if (!fresh) {
      *cached = TargetScanCache::Entry{};
      cached->start_time = candidate.stat.start_time;
    }
  }
  const uint64_t every =
      static_cast<uint64_t>(std::max(1, options.refresh_every));
  // Whether the part `read_at` stamps was read recently enough to reuse.
  auto recent = [&](uint64_t TargetScanCache::Entry::*read_at) {
    return fresh && cached->*read_at > 0 &&
           cache->scan - cached->*read_at < every;
  };
  if (options.read_threads) {
    if (!options.read_thread_cpu &&
        recent(&TargetScanCache::Entry::threads_scan) &&
        cached->num_threads == candidate.stat.num_threads) {
      target->threads = cached->threads;
    } else {
      ReadThreads(dir, options, target, errors);
      if (cached != nullptr) {
        cached->threads = target->threads;
        cached->num_threads = candidate.stat.num_threads;
        cached->threads_scan = cache->scan;
      }
    }
  }
  // On a single node every page is local and there is nothing to place:
  // numa_maps (a walk over every mapped page) is not read at all; nor for
  // thread workers, whose pages are nobody's own (thread_workers.h).
  if (options.read_numa_maps && topology.nodes.size() > 1 && !thread_workers) {
    if (recent(&TargetScanCache::Entry::numa_scan)) {
      target->resident_pages.assign(cached->resident_pages.begin(),
                                    cached->resident_pages.end());
    } else {
      ReadResidentPages(dir, topology, target->page_size, target, errors);
      if (cached != nullptr) {
        cached->resident_pages.assign(target->resident_pages.begin(),
                                      target->resident_pages.end());
        cached->numa_scan = cache->scan;
      }
    }
  }
}

// Processes no longer selected (exited, deselected, draining) are
// forgotten.
void EndScan(Selection selection, TargetScanCache* cache) {
  std::erase_if(cache->entries, [&](const auto& entry) {
    return !selection.selected.contains(entry.first);
  });
  cache->stale.clear();
  cache->ruled_out = std::move(selection.ruled_out);
}

}  // namespace

TargetSelector NginxSelector() {
  TargetSelector selector;
  selector.comms = {"nginx"};
  return selector;
}

absl::StatusOr<std::vector<Target>> ScanTargets(
    const HostPaths& paths, const TargetScanOptions& options,
    const Topology& topology, std::vector<std::string>* errors,
    TargetScanCache* cache, std::vector<RefusedTarget>* refused) {
  if (cache != nullptr) {
    ++cache->scan;  // scan numbers start at 1: 0 marks "never read"
    if (cache->nodes != topology.nodes.size()) {
      cache->entries.clear();
      cache->nodes = topology.nodes.size();
    }
  }
  ASSIGN_OR_RETURN(std::vector<DirEntry> entries,
                   ListDirectoryEntries(paths.procfs_root));
  Selection selection = SelectProcesses(entries, paths.procfs_root,
                                        options.selector, cache, errors);
  const std::map<int32_t, Candidate>& selected = selection.selected;
  std::set<int32_t> parents;
  for (const auto& [pid, candidate] : selected) {
    if (selected.count(candidate.stat.ppid)) {
      parents.insert(candidate.stat.ppid);
    }
  }
  const uint64_t page_size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  TrustCheck trust(paths.procfs_root, options.trust);
  std::vector<Target> targets;
  for (const auto& [pid, candidate] : selected) {
    if (options.skip_draining &&
        absl::StrContains(candidate.cmdline, "is shutting down")) {
      continue;
    }
    const int32_t master = MasterOf(pid, selected);
    if (std::string why = trust.WhyNot(pid, master); !why.empty()) {
      if (refused != nullptr) {
        refused->push_back({pid, candidate.stat.comm, std::move(why)});
      }
      continue;
    }
    Target target;
    target.pid = pid;
    target.comm = candidate.stat.comm;
    target.page_size = page_size;
    const bool thread_workers =
        Contains(options.selector.thread_worker_comms, candidate.stat.comm);
    target.role = RoleOf(candidate, selected, parents, thread_workers);
    target.instance = master;
    ReadTargetParts(JoinPath(paths.procfs_root, absl::StrCat(pid)), candidate,
                    options, topology,
                    thread_workers && target.role == TargetRole::kWorker, cache,
                    &target, errors);
    if (thread_workers && target.role == TargetRole::kWorker) {
      AddThreadWorkers(std::move(target), &targets);
    } else {
      targets.push_back(std::move(target));
    }
  }
  if (cache != nullptr) EndScan(std::move(selection), cache);
  return targets;
}

}  // namespace locus
