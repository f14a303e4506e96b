// Builds Snapshots for tests and benchmarks: N nodes of C CPUs
// (CPU c on node c / C), 10/20 distances, workers with one thread each.
#ifndef LOCUS_TESTS_COMMON_SNAPSHOT_BUILDER_H_
#define LOCUS_TESTS_COMMON_SNAPSHOT_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "policy/snapshot.h"

namespace locus::testing {

inline constexpr uint64_t kSecond = 1'000'000'000;
inline constexpr uint64_t kGiB = 1ull << 30;
inline constexpr uint64_t kMiB = 1ull << 20;

inline std::vector<int> NodeCpus(const Snapshot& s, int node) {
  return s.topology.nodes[node].cpus;
}

inline Snapshot MakeHost(int nodes, int cpus_per_node) {
  Snapshot s;
  s.now_ns = 1000 * kSecond;
  s.tick_ns = kSecond;
  s.numa_balancing_mode = 0;
  for (int n = 0; n < nodes; ++n) {
    Node node;
    node.id = n;
    for (int c = 0; c < cpus_per_node; ++c) {
      node.cpus.push_back(n * cpus_per_node + c);
    }
    node.mem_total_bytes = 64 * kGiB;
    node.mem_free_bytes = 32 * kGiB;
    for (int m = 0; m < nodes; ++m) node.distances.push_back(m == n ? 10 : 20);
    s.topology.nodes.push_back(node);
  }
  for (int cpu = 0; cpu < nodes * cpus_per_node; ++cpu) {
    s.topology.cpu_node.push_back(cpu / cpus_per_node);
    CpuSample sample;
    sample.cpu = cpu;
    sample.busy = 0.5;
    s.cpus.push_back(sample);
  }
  return s;
}

// The nodes with CPUs: MakeHost's, before any AddMemoryNode.
inline int NodesWithCpus(const Snapshot& s) {
  int n = 0;
  while (n < static_cast<int>(s.topology.nodes.size()) &&
         !s.topology.nodes[n].cpus.empty()) {
    ++n;
  }
  return n;
}

// Adds a node of memory and no CPUs (a CXL expander) and puts every node in
// a memory tier: those with CPUs in `cpu_tier`, the new one in `tier`
// (-1: the kernel lists no tiers). Returns the new node's index.
inline int AddMemoryNode(Snapshot& s, int tier, int cpu_tier = 4,
                         int distance = 30) {
  const int index = static_cast<int>(s.topology.nodes.size());
  Node node;
  node.id = index;
  node.mem_total_bytes = 64 * kGiB;
  node.mem_free_bytes = 32 * kGiB;
  node.tier = tier;
  for (Node& other : s.topology.nodes) {
    other.distances.push_back(distance);
    node.distances.push_back(distance);
    if (tier >= 0 && !other.cpus.empty()) other.tier = cpu_tier;
  }
  node.distances.push_back(10);
  s.topology.nodes.push_back(node);
  return index;
}

inline std::vector<int> AllCpus(const Snapshot& s) {
  std::vector<int> cpus;
  for (size_t c = 0; c < s.topology.cpu_node.size(); ++c) {
    cpus.push_back(static_cast<int>(c));
  }
  return cpus;
}

// Sets a worker's faults from where its pages are and where it runs: 1000
// faults spread like its pages, local when on its run node.
inline void SetFaultsFromPages(Target& t, int run_node) {
  uint64_t total = 0;
  for (uint64_t p : t.resident_pages) total += p;
  for (ThreadSample& thread : t.threads) {
    thread.faults.assign(t.resident_pages.size(), NodeFaults{});
    for (size_t m = 0; m < t.resident_pages.size(); ++m) {
      uint64_t f = total == 0 ? 0 : 1000 * t.resident_pages[m] / total;
      if (static_cast<int>(m) == run_node) {
        thread.faults[m].local = f;
      } else {
        thread.faults[m].remote = f;
      }
    }
  }
}

// A worker (pid == tid) running all tick on `run_node`, confined to
// `pinned_node`'s CPUs (or all CPUs when -1), its `pages` all on `mem_node`.
inline Target MakeWorker(const Snapshot& s, int pid, int run_node,
                         int pinned_node, int mem_node,
                         uint64_t pages = 25'600) {
  const int nodes = static_cast<int>(s.topology.nodes.size());
  Target t;
  t.pid = pid;
  t.comm = "nginx";
  t.role = TargetRole::kWorker;
  ThreadSample thread;
  thread.tid = pid;
  thread.cpu = s.topology.nodes[run_node].cpus[0];
  thread.allowed_cpus =
      pinned_node >= 0 ? NodeCpus(s, pinned_node) : AllCpus(s);
  thread.runtime_ns.assign(nodes, 0);
  thread.runtime_ns[run_node] = 500'000'000;
  thread.migrations = 10;
  thread.net_rx_softirq_ns = 1'000'000;
  t.threads.push_back(thread);
  t.resident_pages.assign(nodes, 0);
  t.resident_pages[mem_node] = pages;
  SetFaultsFromPages(t, run_node);
  return t;
}

// A NIC queue IRQ of `device` on `device_node`, affine to `cpus`, with
// `count` interrupts on the first of them.
inline IrqSample MakeNicIrq(const Snapshot& s, int irq, const std::string& dev,
                            int queue, int device_node, std::vector<int> cpus,
                            uint64_t count = 10'000) {
  IrqSample sample;
  sample.irq = irq;
  sample.name = dev + "-rx-" + std::to_string(queue);
  sample.net_device = dev;
  sample.queue = queue;
  sample.device_node = device_node;
  sample.affinity = cpus;
  sample.effective = {cpus.front()};
  sample.count_per_cpu.assign(s.topology.cpu_node.size(), 0);
  sample.count_per_cpu[cpus.front()] = count;
  return sample;
}

}  // namespace locus::testing

#endif  // LOCUS_TESTS_COMMON_SNAPSHOT_BUILDER_H_
