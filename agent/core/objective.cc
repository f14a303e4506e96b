#include "agent/core/objective.h"

#include <algorithm>
#include <variant>

namespace locus {
namespace {

const Target* FindTarget(const Snapshot& snapshot, int32_t pid) {
  for (const Target& target : snapshot.targets) {
    if (target.pid == pid) return &target;
  }
  return nullptr;
}

const IrqSample* FindIrq(const Snapshot& snapshot, int irq) {
  for (const IrqSample& sample : snapshot.irqs) {
    if (sample.irq == irq) return &sample;
  }
  return nullptr;
}

std::optional<double> Share(uint64_t part, uint64_t whole) {
  if (whole == 0) return std::nullopt;
  return static_cast<double>(part) / static_cast<double>(whole);
}

// A pin is judged on what it changes by itself: whether the worker reaches
// its new node's memory locally. Faults on memory still on other nodes turn
// remote the moment a worker is pinned away from it, and stay so until its
// memory has followed (a MigratePages, judged on its own): counting them made
// the loop revert every spread pin of a worker whose memory had not moved yet.
// Too few faults there: all its faults, then cross-node migrations.
std::optional<double> PlacementBadness(const Target& target,
                                       const Topology& topology, int node) {
  uint64_t local = 0, remote = 0, migrations = 0, cross = 0;
  uint64_t home_local = 0, home_remote = 0;
  for (const ThreadSample& thread : target.threads) {
    for (size_t i = 0; i < thread.faults.size(); ++i) {
      const NodeFaults& faults = thread.faults[i];
      local += faults.local;
      remote += faults.remote;
      if (i < topology.nodes.size() && topology.nodes[i].id == node) {
        home_local += faults.local;
        home_remote += faults.remote;
      }
    }
    migrations += thread.migrations;
    cross += thread.cross_node_migrations;
  }
  if (home_local + home_remote >= kMinFaultsToJudge) {
    return Share(home_remote, home_local + home_remote);
  }
  if (local + remote >= kMinFaultsToJudge) return Share(remote, local + remote);
  return Share(cross, migrations);
}

std::optional<double> MemoryBadness(const Target& target,
                                    const Topology& topology, int to_node) {
  uint64_t total = 0, home = 0;
  for (size_t i = 0; i < target.resident_pages.size(); ++i) {
    total += target.resident_pages[i];
    if (i < topology.nodes.size() && topology.nodes[i].id == to_node) {
      home += target.resident_pages[i];
    }
  }
  std::optional<double> local = Share(home, total);
  if (!local) return std::nullopt;
  return 1.0 - *local;
}

// The node of the host's network traffic consumers: where the targets'
// NET_RX softirq time was spent (the weight Decide steers IRQs by), or, with
// none, where the targets spend most of their runtime. Judging by runtime
// alone reverted IRQ moves made for NET_RX whenever workers were spread over
// nodes and the busier node was not the one taking the traffic.
std::optional<int> ConsumerNode(const Snapshot& snapshot) {
  const size_t nodes = snapshot.topology.nodes.size();
  std::vector<uint64_t> net_rx(nodes, 0), runtime(nodes, 0);
  for (const Target& target : snapshot.targets) {
    for (const ThreadSample& thread : target.threads) {
      size_t busiest = 0;
      for (size_t i = 0; i < thread.runtime_ns.size() && i < nodes; ++i) {
        runtime[i] += thread.runtime_ns[i];
        if (thread.runtime_ns[i] > thread.runtime_ns[busiest]) busiest = i;
      }
      if (!thread.runtime_ns.empty() && busiest < nodes) {
        net_rx[busiest] += thread.net_rx_softirq_ns;
      }
    }
  }
  for (const std::vector<uint64_t>* weight : {&net_rx, &runtime}) {
    auto best = std::max_element(weight->begin(), weight->end());
    if (best != weight->end() && *best > 0) {
      return snapshot.topology.nodes[best - weight->begin()].id;
    }
  }
  return std::nullopt;
}

std::optional<double> IrqBadness(const IrqSample& irq,
                                 const Snapshot& snapshot) {
  std::optional<int> node = ConsumerNode(snapshot);
  if (!node) return std::nullopt;
  uint64_t total = 0, local = 0;
  const std::vector<int>& cpu_node = snapshot.topology.cpu_node;
  for (size_t cpu = 0; cpu < irq.count_per_cpu.size(); ++cpu) {
    total += irq.count_per_cpu[cpu];
    if (cpu < cpu_node.size() && cpu_node[cpu] == *node) {
      local += irq.count_per_cpu[cpu];
    }
  }
  std::optional<double> share = Share(local, total);
  if (!share) return std::nullopt;
  return 1.0 - *share;
}

}  // namespace

std::optional<double> Badness(const Action& action, const Snapshot& snapshot) {
  if (const auto* pin = std::get_if<PinThread>(&action.op)) {
    const Target* target = FindTarget(snapshot, pin->pid);
    return target ? PlacementBadness(*target, snapshot.topology, pin->node)
                  : std::nullopt;
  }
  if (const auto* move = std::get_if<MigratePages>(&action.op)) {
    const Target* target = FindTarget(snapshot, move->pid);
    return target ? MemoryBadness(*target, snapshot.topology, move->to_node)
                  : std::nullopt;
  }
  const IrqSample* irq =
      FindIrq(snapshot, std::get<SetIrqAffinity>(action.op).irq);
  return irq ? IrqBadness(*irq, snapshot) : std::nullopt;
}

std::optional<double> MemoryOffPinNode(const Action& action,
                                       const Snapshot& snapshot) {
  const auto* pin = std::get_if<PinThread>(&action.op);
  if (pin == nullptr) return std::nullopt;
  const Target* target = FindTarget(snapshot, pin->pid);
  return target ? MemoryBadness(*target, snapshot.topology, pin->node)
                : std::nullopt;
}

bool HasEntity(const Action& action, const Snapshot& snapshot) {
  if (const auto* set = std::get_if<SetIrqAffinity>(&action.op)) {
    return FindIrq(snapshot, set->irq) != nullptr;
  }
  int32_t pid = std::holds_alternative<PinThread>(action.op)
                    ? std::get<PinThread>(action.op).pid
                    : std::get<MigratePages>(action.op).pid;
  return FindTarget(snapshot, pid) != nullptr;
}

}  // namespace locus
