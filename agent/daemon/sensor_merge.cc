#include "agent/daemon/sensor_merge.h"

#include <algorithm>

namespace locus {
namespace {

uint64_t Delta(uint64_t now, uint64_t before) {
  return now >= before ? now - before : 0;  // a reset map starts afresh
}

// Index in topology.nodes of node `id`, or -1.
int NodeIndex(const Topology& topology, int id) {
  for (size_t i = 0; i < topology.nodes.size(); ++i) {
    if (topology.nodes[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

int NodeOfCpu(const Topology& topology, int cpu) {
  if (cpu < 0 || cpu >= static_cast<int>(topology.cpu_node.size())) return -1;
  return topology.cpu_node[cpu];
}

void MergeFaults(const SensorReading& reading, const TaskCounters& now,
                 const TaskCounters* before, const Topology& topology,
                 int running_node, ThreadSample* thread) {
  thread->faults.assign(topology.nodes.size(), NodeFaults{});
  for (size_t node = 0; node < now.numa_faults.size(); ++node) {
    int index = NodeIndex(topology, static_cast<int>(node));
    if (index < 0) continue;
    const NumaNodeFaults& f = now.numa_faults[node];
    NodeFaults& out = thread->faults[index];
    if (reading.numa_kind == NumaFaultKind::kPagesExact) {
      const NumaNodeFaults* b = before && node < before->numa_faults.size()
                                    ? &before->numa_faults[node]
                                    : nullptr;
      out.local = b ? Delta(f.local, b->local) : 0;
      out.remote = b ? Delta(f.remote, b->remote) : 0;
    } else {
      // The kernel's decaying weights are already a recent-activity
      // figure: taken as they are, split by where the thread runs now.
      (static_cast<int>(node) == running_node ? out.local : out.remote) =
          f.total;
    }
  }
}

// The task with `tid` in `tasks` (ascending by tid), searched from `*from`
// on and leaving it there: callers ask in ascending order, so a whole pass
// walks `tasks` once, in memory order, instead of missing the cache on a
// random probe per thread (most of a merge's cost at 1000 threads).
const TaskCounters* NextTask(const std::vector<TaskCounters>& tasks,
                             size_t* from, int32_t tid) {
  while (*from < tasks.size() && tasks[*from].tid < tid) ++*from;
  return *from < tasks.size() && tasks[*from].tid == tid ? &tasks[*from]
                                                         : nullptr;
}

// The counters' growth since `before` as the thread's per-tick figures.
void AddDeltas(const TaskCounters& t, const TaskCounters& before,
               const Topology& topology, ThreadSample* thread) {
  thread->migrations = Delta(t.migrations, before.migrations);
  thread->cross_node_migrations =
      Delta(t.cross_node_migrations, before.cross_node_migrations);
  thread->net_rx_softirq_ns =
      Delta(t.net_rx_softirq_ns, before.net_rx_softirq_ns);
  for (size_t node = 0; node < t.runtime_ns.size(); ++node) {
    int index = NodeIndex(topology, static_cast<int>(node));
    if (index < 0) continue;
    uint64_t b = node < before.runtime_ns.size() ? before.runtime_ns[node] : 0;
    thread->runtime_ns[index] = Delta(t.runtime_ns[node], b);
  }
}

// The snapshot's threads, ascending by tid like the readings' tasks.
std::vector<ThreadSample*> ThreadsByTid(Snapshot* snapshot) {
  std::vector<ThreadSample*> threads;
  for (Target& target : snapshot->targets) {
    for (ThreadSample& thread : target.threads) threads.push_back(&thread);
  }
  std::sort(threads.begin(), threads.end(),
            [](const ThreadSample* a, const ThreadSample* b) {
              return a->tid < b->tid;
            });
  return threads;
}

}  // namespace

void SensorMerge::Merge(const SensorReading& reading, Snapshot* snapshot) {
  MergeThreads(reading, snapshot);
  MergeCpus(reading, snapshot);
  cpus_ = reading.cpus;  // indexed by cpu (sensor_reading.h)
  previous_ns_ = reading.monotonic_ns;
}

void SensorMerge::MergeThreads(const SensorReading& reading,
                               Snapshot* snapshot) {
  const Topology& topology = snapshot->topology;
  const size_t num_nodes = topology.nodes.size();
  // Only the targets' threads are kept for the next tick's deltas (a reading
  // without a scope has every task on the host).
  std::vector<ThreadSample*> threads = ThreadsByTid(snapshot);
  std::vector<TaskCounters> kept;
  kept.reserve(threads.size());
  size_t now_at = 0;
  size_t before_at = 0;
  for (ThreadSample* thread : threads) {
    thread->runtime_ns.assign(num_nodes, 0);
    const TaskCounters* now = NextTask(reading.tasks, &now_at, thread->tid);
    if (now == nullptr) continue;
    const TaskCounters* before = NextTask(tasks_, &before_at, thread->tid);
    const TaskCounters& t = *now;
    if (t.cpu >= 0) thread->cpu = t.cpu;
    if (before) AddDeltas(t, *before, topology, thread);
    if (reading.numa_active) {
      MergeFaults(reading, t, before, topology,
                  NodeOfCpu(topology, thread->cpu), thread);
    }
    if (kept.empty() || kept.back().tid != t.tid) kept.push_back(t);
  }
  tasks_ = std::move(kept);
}

void SensorMerge::MergeCpus(const SensorReading& reading,
                            Snapshot* snapshot) const {
  uint64_t elapsed = previous_ns_ && reading.monotonic_ns > previous_ns_
                         ? reading.monotonic_ns - previous_ns_
                         : 0;
  snapshot->cpus.resize(std::max(snapshot->cpus.size(), reading.cpus.size()));
  for (const CpuCounters& c : reading.cpus) {
    if (c.cpu < 0 || c.cpu >= static_cast<int>(snapshot->cpus.size())) continue;
    CpuSample& out = snapshot->cpus[c.cpu];
    out.cpu = c.cpu;
    if (c.cpu >= static_cast<int>(cpus_.size()) || cpus_[c.cpu].cpu != c.cpu ||
        elapsed == 0) {
      continue;
    }
    const CpuCounters& before = cpus_[c.cpu];
    out.busy = std::min(
        1.0, static_cast<double>(Delta(c.busy_ns, before.busy_ns)) / elapsed);
    for (int v = 0; v < kNumSoftirqVectors; ++v) {
      out.softirq_ns[v] = Delta(c.softirq_ns[v], before.softirq_ns[v]);
    }
  }
}

}  // namespace locus
