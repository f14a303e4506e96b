// Where each target's cgroup lets it run and keep memory: the cpuset of
// /proc/PID/cgroup, read through a cgroupfs root (<sysfs_root>/fs/cgroup) so
// that fixture trees of cgroup v1 and v2 stand in for the kernel's.
#ifndef LOCUS_AGENT_HOST_CGROUP_CPUSET_H_
#define LOCUS_AGENT_HOST_CGROUP_CPUSET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "policy/snapshot.h"

namespace locus {

// The cgroup that holds a process's cpuset, from /proc/PID/cgroup: the v1
// line naming the cpuset controller when there is one (a hybrid host keeps
// cpuset on v1), else the v2 unified ("0::") line. `path` is empty when
// neither is present.
struct CpusetCgroup {
  int version = 2;
  std::string path;  // "/kubepods.slice/...", as the process's line says
};
CpusetCgroup CpusetCgroupOf(absl::string_view proc_cgroup);

// A cgroup's effective cpuset: v2 cpuset.cpus.effective and
// cpuset.mems.effective (of the nearest ancestor with the controller on,
// which is what the kernel applies), v1 cpuset.effective_cpus and
// cpuset.effective_mems.
struct Cpuset {
  std::vector<int> cpus;
  std::vector<int> mems;  // node ids
};

class CgroupCpusetReader {
 public:
  // `cgroupfs_root`: where cgroup2 (or, for v1, the "cpuset" directory of
  // the v1 hierarchies) is mounted: "/sys/fs/cgroup" on a host.
  explicit CgroupCpusetReader(std::string cgroupfs_root)
      : root_(std::move(cgroupfs_root)) {}

  // Sets each target's cgroup: its absolute path and cpuset. A cgroup is
  // read once per call however many targets share it, and again at the
  // next call, so a resized pod is followed within a scan. A target whose
  // cpuset cannot be read (its cgroup removed while read, a malformed file)
  // keeps no constraint for this scan and the reason goes to `errors` as
  // "<path>: <why>"; one that exited mid-scan is skipped quietly. A host
  // without cgroups mounted, or without the cpuset controller, constrains
  // nothing and reports nothing.
  void Fill(const std::string& procfs_root, std::vector<Target>& targets,
            std::vector<std::string>* errors);

 private:
  // The cpuset of `cgroup` (empty lists: none), or an error message.
  struct Read {
    Cpuset cpuset;
    std::string error;
  };
  Read ReadCgroup(const CpusetCgroup& cgroup) const;
  // The absolute path of `path` as /proc shows it to locusd in a cgroup
  // namespace (a container with hostPID): "/../../kubepods-pod1.slice/c"
  // lies `..`-many levels above locusd's own cgroup, whose depth /proc/1
  // (init, at the root) tells. Found by looking for `rest` under the
  // cgroups at that depth; "" when none or several hold it.
  std::string Absolute(const CpusetCgroup& cgroup, int ns_depth);
  // `pid`'s cpuset cgroup with its absolute path; false when it has none,
  // exited (quietly) or cannot be found (reported). `ns_depth`: locusd's
  // cgroup namespace depth, -1 until read.
  bool Locate(const std::string& procfs_root, int32_t pid, CpusetCgroup* cgroup,
              int* ns_depth, std::vector<std::string>* errors);

  std::string root_;
  // This call's reads, shared by the targets of each cgroup.
  absl::flat_hash_map<std::string, std::shared_ptr<const CgroupCpuset>> scan_;
  // Namespaced paths already resolved: checked, not searched, again.
  absl::flat_hash_map<std::string, std::string> absolute_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_HOST_CGROUP_CPUSET_H_
