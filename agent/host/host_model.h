// The host as the control loop sees it each tick: topology, targets with
// their threads and memory placement, and IRQs (counts as deltas over the
// tick). Sensors (agent/sensors) add runtime, migrations and faults on top.
#ifndef LOCUS_AGENT_HOST_HOST_MODEL_H_
#define LOCUS_AGENT_HOST_HOST_MODEL_H_

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "agent/host/cgroup_cpuset.h"
#include "agent/host/file_util.h"
#include "agent/host/host_paths.h"
#include "agent/host/irqs.h"
#include "agent/host/kubelet.h"
#include "agent/host/targets.h"
#include "policy/snapshot.h"

namespace locus {

struct HostModelOptions {
  HostPaths paths;
  TargetScanOptions targets;
  bool read_irqs = true;
  // The kubelet's state directory (cpu_manager_state, config.yaml): which
  // containers it places itself (kubelet.h). Empty: /var/lib/kubelet as
  // init sees it, <procfs_root>/1/root/var/lib/kubelet, which reaches the
  // host's from a container with hostPID and no extra mount.
  std::string kubelet_root;
};

class HostModel {
 public:
  explicit HostModel(HostModelOptions options)
      : options_(std::move(options)),
        cpusets_(JoinPath(options_.paths.sysfs_root, "fs/cgroup")),
        kubelet_(!options_.kubelet_root.empty()
                     ? options_.kubelet_root
                     : JoinPath(options_.paths.procfs_root,
                                "1/root/var/lib/kubelet")) {}

  // Fills snapshot->topology, ->targets (each with its cgroup's cpuset and
  // whether the kubelet places it), ->refused_targets (selected by
  // name but not trusted, each with why) and ->irqs. What rarely changes is
  // re-read every targets.refresh_every calls: thread lists, numa_maps, and
  // the NICs and IRQs of no NIC (IrqReadCache). Fails only when the
  // topology cannot be read at all (no node directory) or /proc cannot be
  // listed; everything else that is wrong (a truncated stat, a malformed
  // numa_maps, a missing IRQ file) goes to `errors` as "<path>: <why>" and
  // the rest of the model still loads. IRQ counts are deltas since the last
  // Refresh (zero on the first).
  absl::Status Refresh(Snapshot* snapshot, std::vector<std::string>* errors);

  // New selectors (the policy was reloaded); used from the next Refresh.
  void set_targets(TargetScanOptions targets) {
    options_.targets = std::move(targets);
    scan_cache_.ruled_out.clear();  // by the old selectors
  }

  // IRQs the IRQ actuator found kernel-managed (EIO): reported as managed.
  void SetManagedIrqs(std::set<int> irqs) { managed_ = std::move(irqs); }

  // Processes whose threads and memory the next Refresh must re-read rather
  // than reuse (see TargetScanOptions::refresh_every).
  void MarkStale(const std::set<int32_t>& pids) {
    scan_cache_.stale.insert(pids.begin(), pids.end());
  }

  // Processes that may have been renamed (exec, prctl) since the last call,
  // as the sensors report them (SensorReading::renamed): the next scan
  // re-reads their comm, and reuses the others' verdicts. nullopt: any
  // process may have been; every comm is re-read until a call says again.
  void NoteRenamed(const std::optional<std::vector<int32_t>>& pids) {
    if (!pids) {
      scan_cache_.ruled_out.clear();
      scan_cache_.names_tracked = false;
      return;
    }
    for (int32_t pid : *pids) scan_cache_.ruled_out.erase(pid);
    scan_cache_.names_tracked = true;
  }

 private:
  HostModelOptions options_;
  std::set<int> managed_;
  TargetScanCache scan_cache_;
  IrqReadCache irq_cache_;
  CgroupCpusetReader cpusets_;  // through <sysfs_root>/fs/cgroup
  KubeletWatch kubelet_;
  std::vector<IrqSample> previous_irqs_;  // totals at the last Refresh
  bool have_previous_ = false;
};

}  // namespace locus

#endif  // LOCUS_AGENT_HOST_HOST_MODEL_H_
