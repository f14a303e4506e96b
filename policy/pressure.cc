#include "policy/pressure.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"

namespace locus {
namespace {

// Node index of each CPU; -1 when unknown.
std::vector<int> CpuNodeIndex(const Topology& topology) {
  std::vector<int> index(topology.cpu_node.size(), -1);
  for (size_t i = 0; i < topology.nodes.size(); ++i) {
    for (int cpu : topology.nodes[i].cpus) {
      if (cpu >= 0 && cpu < static_cast<int>(index.size())) {
        index[cpu] = static_cast<int>(i);
      }
    }
  }
  return index;
}

double CpuBusy(const Snapshot& snapshot, int cpu) {
  if (cpu < 0 || cpu >= static_cast<int>(snapshot.cpus.size())) return 0;
  const CpuSample& sample = snapshot.cpus[cpu];
  return sample.busy_all >= 0 ? sample.busy_all : sample.busy;
}

// Adds each target's runtime and wait to the nodes it ran and waited on.
void AddTargets(const Snapshot& snapshot, const std::vector<int>& node_of,
                double tick, std::vector<NodePressure>& out) {
  std::vector<double> wait(out.size());
  for (const Target& target : snapshot.targets) {
    std::fill(wait.begin(), wait.end(), 0);
    for (const ThreadSample& thread : target.threads) {
      const size_t n_max = std::min(out.size(), thread.runtime_ns.size());
      for (size_t n = 0; n < n_max; ++n) {
        out[n].ours += thread.runtime_ns[n] / tick;
      }
      const int cpu = thread.cpu;
      const int n = cpu >= 0 && cpu < static_cast<int>(node_of.size())
                        ? node_of[cpu]
                        : -1;
      if (n >= 0) wait[n] += thread.wait_ns / tick;
    }
    for (size_t n = 0; n < out.size(); ++n) {
      out[n].wait = std::max(out[n].wait, wait[n]);
      out[n].wait_total += wait[n];
    }
  }
}

}  // namespace

std::vector<NodePressure> MeasurePressure(const Snapshot& snapshot,
                                          const v1::Spill& spill) {
  const Topology& topology = snapshot.topology;
  std::vector<NodePressure> out(topology.nodes.size());
  const double tick =
      static_cast<double>(std::max<uint64_t>(snapshot.tick_ns, 1));
  for (size_t n = 0; n < out.size(); ++n) {
    for (int cpu : topology.nodes[n].cpus)
      out[n].busy += CpuBusy(snapshot, cpu);
    out[n].cpus = static_cast<int>(topology.nodes[n].cpus.size());
  }
  AddTargets(snapshot, CpuNodeIndex(topology), tick, out);
  for (NodePressure& node : out) {
    if (node.cpus == 0) continue;
    node.busy /= node.cpus;
    node.ours = std::min(1.0, node.ours / node.cpus);
    node.loaded = node.busy >= spill.busy_above();
    node.saturated = node.loaded && node.wait >= spill.wait_above();
    node.calm = node.others() < spill.busy_above() - kSpillCalmBand;
  }
  return out;
}

void ObservePressure(History& history, const Snapshot& snapshot,
                     const v1::Policy& policy) {
  const std::vector<NodePressure> nodes =
      MeasurePressure(snapshot, policy.placement().spill());
  absl::flat_hash_map<int, NodePressureHistory> now;
  for (size_t n = 0; n < nodes.size(); ++n) {
    const int id = snapshot.topology.nodes[n].id;
    NodePressureHistory before;
    if (auto it = history.pressure.find(id); it != history.pressure.end()) {
      before = it->second;
    }
    NodePressureHistory& entry = now[id];
    if (before.saturated_since_ns != 0 && nodes[n].loaded) {
      entry.saturated_since_ns = before.saturated_since_ns;
    } else if (nodes[n].saturated) {
      entry.saturated_since_ns = snapshot.now_ns;
    }
    if (nodes[n].calm) {
      entry.calm_since_ns =
          before.calm_since_ns != 0 ? before.calm_since_ns : snapshot.now_ns;
    }
  }
  history.pressure = std::move(now);
}

}  // namespace locus
