#include "agent/host/host_model.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "agent/host/cpu_mask.h"
#include "agent/host/topology.h"
#include "common/status_macros.h"

namespace locus {
namespace {

// A thread runs only within its cgroup's cpuset: when the cpuset changes the
// kernel moves the thread's affinity with it. A thread list reused from an
// earlier scan (TargetScanOptions::refresh_every) still shows the old one.
void KeepWithinCpusets(std::vector<Target>& targets) {
  for (Target& target : targets) {
    if (!target.cgroup || target.cgroup->cpus.empty()) continue;
    const std::vector<int>& cpuset = target.cgroup->cpus;
    for (ThreadSample& thread : target.threads) {
      const std::vector<int>& allowed = thread.allowed_cpus;
      if (std::includes(cpuset.begin(), cpuset.end(), allowed.begin(),
                        allowed.end())) {
        continue;
      }
      std::vector<int> within = IntersectCpus(allowed, cpuset);
      thread.allowed_cpus = within.empty() ? cpuset : std::move(within);
    }
  }
}

}  // namespace

absl::Status HostModel::Refresh(Snapshot* snapshot,
                                std::vector<std::string>* errors) {
  // Re-read every tick: a few small files, and CPU hotplug is then seen.
  ASSIGN_OR_RETURN(snapshot->topology,
                   ReadTopology(options_.paths.sysfs_root, errors));
  snapshot->refused_targets.clear();
  ASSIGN_OR_RETURN(
      snapshot->targets,
      ScanTargets(options_.paths, options_.targets, snapshot->topology, errors,
                  &scan_cache_, &snapshot->refused_targets));
  // Every scan: a pod resized or rebalanced by the kubelet is followed.
  cpusets_.Fill(options_.paths.procfs_root, snapshot->targets, errors);
  kubelet_.Fill(snapshot->targets, errors);
  KeepWithinCpusets(snapshot->targets);

  snapshot->irqs.clear();
  if (options_.read_irqs) {
    irq_cache_.refresh_every = options_.targets.refresh_every;
    absl::StatusOr<std::vector<IrqSample>> irqs =
        ReadIrqs(options_.paths, managed_, errors, &irq_cache_);
    if (!irqs.ok()) {
      // IRQs are one part of the model; the rest still stands.
      errors->push_back(std::string(irqs.status().message()));
      return absl::OkStatus();
    }
    std::vector<IrqSample> totals = *irqs;
    if (have_previous_) {
      IrqCountDeltas(previous_irqs_, &*irqs);
    } else {
      for (IrqSample& irq : *irqs) {
        std::fill(irq.count_per_cpu.begin(), irq.count_per_cpu.end(), 0);
      }
    }
    previous_irqs_ = std::move(totals);
    have_previous_ = true;
    snapshot->irqs = *std::move(irqs);
  }
  return absl::OkStatus();
}

}  // namespace locus
