// The per-node part of the exporter: faults, CPU and memory per node, the
// targets' threads and memory by node, and connection steering's counters.
#include <map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "agent/api/prometheus_exporter.h"
#include "agent/api/prometheus_labels.h"

namespace locus {

void PrometheusExporter::ObserveNodes(const v1::Metrics& metrics) {
  for (const v1::NodeMetrics& node : metrics.nodes()) {
    std::string label = NodeLabel(node.node());
    numa_faults_->Add({{"node", label}, {"locality", "local"}})
        .Increment(static_cast<double>(node.faults_local()));
    numa_faults_->Add({{"node", label}, {"locality", "remote"}})
        .Increment(static_cast<double>(node.faults_remote()));
    // The wire's 0 for "no faults" would read as "all remote" on a graph.
    bool faults = node.faults_local() + node.faults_remote() > 0;
    node_local_fault_ratio_->Add({{"node", label}})
        .Set(faults ? node.local_fault_ratio()
                    : std::numeric_limits<double>::quiet_NaN());
    node_cpu_busy_->Add({{"node", label}}).Set(node.cpu_busy());
    node_runqueue_wait_->Add({{"node", label}}).Set(node.runqueue_wait_s());
    node_memory_free_->Add({{"node", label}})
        .Set(static_cast<double>(node.mem_free_bytes()));
    target_resident_->Add({{"node", label}})
        .Set(static_cast<double>(node.target_resident_bytes()));
  }
}

void PrometheusExporter::ObserveHomeTime(const v1::Metrics& metrics) {
  // By home node, not by worker: the series stay bounded by the nodes, as
  // every series here (a worker's own ratio is in the stream, `locusctl
  // top`). The workers' threads' runtime at home over their runtime.
  std::map<std::string, std::pair<double, double>> run;
  for (const v1::NodeMetrics& node : metrics.nodes()) {
    run[NodeLabel(node.node())] = {0, 0};
  }
  for (const v1::TaskMetrics& task : metrics.tasks()) {
    if (task.home_node() < 0 || task.home_time_ratio() < 0) continue;
    auto& [home, all] = run[NodeLabel(task.home_node())];
    home += task.home_time_ratio() * task.runtime_ns();
    all += task.runtime_ns();
  }
  for (const auto& [node, figures] : run) {
    // No runtime with a home there this tick: nothing to be away from.
    worker_home_time_->Add({{"node", node}})
        .Set(figures.second > 0 ? figures.first / figures.second : 1.0);
  }
}

void PrometheusExporter::ObserveWorkerMemory(const v1::AgentStatus& status) {
  // By home node, as the home time: (nodes + 1) x nodes series whatever the
  // workers. Every pair is set, so a home that lost its workers reads 0.
  // The status has one entry per worker process, its bytes indexed like
  // its memory_tiering's nodes.
  const auto& nodes = status.memory_tiering().nodes();
  std::map<std::pair<std::string, std::string>, double> bytes;
  std::vector<std::string> homes = {"none"};
  for (const v1::TierNode& node : nodes)
    homes.push_back(NodeLabel(node.node()));
  for (const std::string& home : homes) {
    for (const v1::TierNode& node : nodes) {
      bytes[{home, NodeLabel(node.node())}] = 0;
    }
  }
  for (const v1::WorkerMemory& worker : status.worker_memory()) {
    const std::string home =
        worker.home_node() < 0 ? "none" : NodeLabel(worker.home_node());
    for (int n = 0; n < worker.resident_bytes_size() && n < nodes.size(); ++n) {
      bytes[{home, NodeLabel(nodes[n].node())}] +=
          static_cast<double>(worker.resident_bytes(n));
    }
  }
  for (const auto& [labels, value] : bytes) {
    worker_resident_->Add({{"home", labels.first}, {"node", labels.second}})
        .Set(value);
  }
}

void PrometheusExporter::ObserveTargets(const v1::Metrics& metrics,
                                        const v1::AgentStatus& status) {
  target_processes_->Add({}).Set(status.targets());
  absl::flat_hash_map<std::string, int> threads;
  for (const v1::NodeMetrics& node : metrics.nodes()) {
    threads[NodeLabel(node.node())] = 0;
  }
  // A node that had threads of unknown placement before reads 0 now.
  if (target_threads_->Has({{"node", "unknown"}})) threads["unknown"] = 0;
  for (const v1::TaskMetrics& task : metrics.tasks()) {
    ++threads[NodeLabel(task.node())];
  }
  for (const auto& [node, count] : threads) {
    target_threads_->Add({{"node", node}}).Set(count);
  }
}

void PrometheusExporter::ObserveConnections(const v1::Metrics& metrics) {
  int steered = 0;
  for (const v1::ConnectionGroup& group : metrics.connections()) {
    steered += group.steered();
    for (const v1::NodeConnections& n : group.nodes()) {
      const std::string node = NodeLabel(n.node());
      for (auto [path, count] : {std::pair{"local", n.local()},
                                 {"spilled", n.spilled()},
                                 {"fell_back", n.fell_back()},
                                 {"migrated", n.migrated()},
                                 {"control", n.control()}}) {
        connections_->Add({{"node", node}, {"path", path}})
            .Increment(static_cast<double>(count));
      }
    }
  }
  connection_groups_->Add({{"state", "steered"}}).Set(steered);
  connection_groups_->Add({{"state", "not_steered"}})
      .Set(metrics.connections_size() - steered);
}

}  // namespace locus
