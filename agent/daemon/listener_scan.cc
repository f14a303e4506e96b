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
  for (const GroupSocket& socket : group.sockets) {
    sample.sockets.push_back({socket.inode, socket.owner_pid});
  }
  return sample;
}

void ListenerScan::Refresh(const std::vector<Target>& targets,
                           std::vector<std::string>* errors) {
  std::set<int32_t> workers;
  for (const Target& target : targets) {
    // Thread workers' sockets are one process's: which thread accepts on
    // which is not known, so their groups are not steered.
    if (target.role == TargetRole::kWorker && target.process == 0) {
      workers.insert(target.pid);
    }
  }
  if (scanned_ && workers == workers_ && ++scans_since_ < rescan_every_) {
    return;
  }
  scanned_ = true;
  scans_since_ = 0;
  workers_ = std::move(workers);
  std::vector<ListenGroup> groups;
  for (const NginxInstance& instance : Instances(errors)) {
    absl::StatusOr<std::vector<ListenGroup>> found =
        ReadListenGroups(procfs_root_, instance, errors);
    if (!found.ok()) {
      errors->push_back(
          absl::StrCat("connections: ", found.status().message()));
      continue;
    }
    for (ListenGroup& group : *found) groups.push_back(std::move(group));
  }
  groups_ = std::move(groups);
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
