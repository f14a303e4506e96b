#include "agent/daemon/listener_scan.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/act/connections/connection_steering.h"
#include "agent/host/file_util.h"
#include "agent/host/proc_parse.h"

namespace locus {

ListenGroupSample SampleOf(const ListenGroup& group) {
  ListenGroupSample sample;
  sample.name = ListenKeyString(group.key);
  sample.port = group.key.address.port;
  sample.thread_workers = group.thread_workers;
  for (const GroupSocket& socket : group.sockets) {
    sample.sockets.push_back({socket.inode, socket.owner_pid, socket.shared});
  }
  return sample;
}

void ListenerScan::Refresh(const std::vector<Target>& targets,
                           std::vector<std::string>* errors) {
  std::set<int32_t> workers;
  std::map<int32_t, int32_t> thread_processes;
  std::set<int32_t> threads;
  for (const Target& target : targets) {
    if (target.role != TargetRole::kWorker) continue;
    if (target.process == 0) {
      workers.insert(target.pid);
    } else {
      thread_processes[target.process] =
          target.instance != 0 ? target.instance : target.process;
      threads.insert(target.pid);
    }
  }
  const bool same =
      scanned_ && workers == workers_ && thread_processes == thread_processes_;
  if (!same || ++scans_since_ >= rescan_every_) {
    scanned_ = true;
    scans_since_ = 0;
    workers_ = std::move(workers);
    thread_processes_ = std::move(thread_processes);
    FindNewest();
    WatchAccepts(errors);
    Discover(errors);
  }
  OwnThreadSockets(threads, errors);
}

void ListenerScan::FindNewest() {
  // A reload's new process appears after its old one (of two found in one
  // scan, the larger pid is taken as the newer).
  std::map<int32_t, uint64_t> seen;
  for (const auto& [process, instance] : thread_processes_) {
    auto it = seen_.find(process);
    seen[process] = it != seen_.end() ? it->second : ++seen_count_;
  }
  seen_ = std::move(seen);
  newest_.clear();
  for (const auto& [process, instance] : thread_processes_) {
    auto [it, added] = newest_.try_emplace(instance, process);
    if (!added && seen_[process] > seen_[it->second]) it->second = process;
  }
}

void ListenerScan::Discover(std::vector<std::string>* errors) {
  std::vector<ListenGroup> groups;
  auto add = [&](const NginxInstance& instance, bool thread_workers) {
    absl::StatusOr<std::vector<ListenGroup>> found =
        ReadListenGroups(procfs_root_, instance, errors);
    if (!found.ok()) {
      errors->push_back(
          absl::StrCat("connections: ", found.status().message()));
      return;
    }
    for (ListenGroup& group : *found) {
      if (thread_workers) {
        // Every socket is in the one process's epoll sets: its owner is
        // the thread that accepts on it (OwnThreadSockets).
        group.thread_workers = true;
        for (GroupSocket& socket : group.sockets) socket.owner_pid = 0;
      }
      groups.push_back(std::move(group));
    }
  };
  for (const NginxInstance& instance : Instances(errors)) add(instance, false);
  // A reload's old and new worker processes share their master's sockets:
  // one instance, so that each group is found once.
  std::map<int32_t, NginxInstance> by_instance;
  for (const auto& [process, instance] : thread_processes_) {
    by_instance[instance].master_pid = instance;
    by_instance[instance].worker_pids.push_back(process);
  }
  for (const auto& [unused, instance] : by_instance) add(instance, true);
  groups_ = std::move(groups);
}

void ListenerScan::WatchAccepts(std::vector<std::string>* errors) {
  if (accepts_ == nullptr) return;
  std::set<int32_t> processes;
  for (const auto& [process, unused] : thread_processes_) {
    processes.insert(process);
  }
  if (processes == accepts_watched_) return;
  absl::Status status =
      accepts_->Watch(std::vector<int32_t>(processes.begin(), processes.end()));
  if (!status.ok()) {
    accepts_watched_.clear();
    errors->push_back(absl::StrCat(
        "connections: which worker thread accepts on which socket is "
        "unknown, their connections are not steered: ",
        status.message()));
    return;
  }
  accepts_watched_ = std::move(processes);
}

void ListenerScan::OwnThreadSockets(const std::set<int32_t>& threads,
                                    std::vector<std::string>* errors) {
  if (accepts_ == nullptr || accepts_watched_.empty()) return;
  absl::StatusOr<absl::flat_hash_map<uint64_t, AcceptOwner>> owners =
      accepts_->Read();
  if (!owners.ok()) {
    errors->push_back(absl::StrCat("connections: ", owners.status().message()));
    return;
  }
  std::vector<uint64_t> gone;
  for (ListenGroup& group : groups_) {
    if (!group.thread_workers) continue;
    for (GroupSocket& socket : group.sockets) {
      socket.owner_pid = 0;
      socket.shared = false;
      auto it = owners->find(socket.inode);
      if (it == owners->end() || !accepts_watched_.contains(it->second.process))
        continue;
      auto instance = thread_processes_.find(it->second.process);
      if (instance == thread_processes_.end() ||
          newest_[instance->second] != it->second.process) {
        continue;  // its old process's: the new one's threads tell afresh
      }
      if (it->second.shared) {
        socket.shared = true;
      } else if (threads.contains(it->second.tid)) {
        socket.owner_pid = it->second.tid;
      } else {
        gone.push_back(socket.inode);  // its thread exited: learn afresh
      }
    }
  }
  if (!gone.empty()) accepts_->Forget(gone);
}

std::vector<NginxInstance> ListenerScan::Instances(
    std::vector<std::string>* errors) const {
  std::map<int32_t, NginxInstance> by_master;
  for (int32_t pid : workers_) {
    const std::string path = JoinPath(procfs_root_, absl::StrCat(pid, "/stat"));
    absl::StatusOr<std::string> text = ReadTextFile(path);
    if (!text.ok()) continue;  // exited since the scan
    absl::StatusOr<ProcStat> stat = ParseProcStat(*text);
    if (!stat.ok()) {
      errors->push_back(
          absl::StrCat("connections: ", path, ": ", stat.status().message()));
      continue;
    }
    NginxInstance& instance = by_master[stat->ppid];
    instance.master_pid = stat->ppid;
    instance.worker_pids.push_back(pid);
  }
  std::vector<NginxInstance> instances;
  for (auto& [master, instance] : by_master) {
    instances.push_back(std::move(instance));
  }
  return instances;
}

}  // namespace locus
