#include "agent/core/objective.h"

#include <variant>
#include <vector>

#include "absl/algorithm/container.h"
#include "policy/history.h"
#include "policy/tiers.h"

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
// Faults on a node without CPUs (policy/tiers.h) count nowhere: every one is
// remote (no CPU there) and its pages are the kernel's to place.
std::optional<double> PlacementBadness(const Target& target,
                                       const Topology& topology, int node) {
  uint64_t local = 0, remote = 0, migrations = 0, cross = 0;
  uint64_t home_local = 0, home_remote = 0;
  const std::vector<char> lower = LowerTierNodes(topology);
  for (const ThreadSample& thread : target.threads) {
    for (size_t i = 0; i < thread.faults.size(); ++i) {
      if (i < lower.size() && lower[i]) continue;
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

// Over the nodes the move may take pages from: those it leaves (a lower
// tier's) neither count as home nor as away.
std::optional<double> MemoryBadness(const Target& target,
                                    const Topology& topology, int to_node,
                                    const std::vector<int>& leave_nodes) {
  uint64_t total = 0, home = 0;
  for (size_t i = 0; i < target.resident_pages.size(); ++i) {
    if (i < topology.nodes.size() &&
        absl::c_linear_search(leave_nodes, topology.nodes[i].id)) {
      continue;
    }
    total += target.resident_pages[i];
    if (i < topology.nodes.size() && topology.nodes[i].id == to_node) {
      home += target.resident_pages[i];
    }
  }
  std::optional<double> local = Share(home, total);
  if (!local) return std::nullopt;
  return 1.0 - *local;
}

std::optional<double> IrqBadness(const IrqSample& irq, int node,
                                 const Snapshot& snapshot) {
  uint64_t total = 0, local = 0;
  const std::vector<int>& cpu_node = snapshot.topology.cpu_node;
  for (size_t cpu = 0; cpu < irq.count_per_cpu.size(); ++cpu) {
    total += irq.count_per_cpu[cpu];
    if (cpu < cpu_node.size() && cpu_node[cpu] == node) {
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
    const Target* target = FindTarget(snapshot, WorkerOf(*pin));
    return target ? PlacementBadness(*target, snapshot.topology, pin->node)
                  : std::nullopt;
  }
  if (const auto* move = std::get_if<MigratePages>(&action.op)) {
    const Target* target = FindTarget(snapshot, move->pid);
    return target ? MemoryBadness(*target, snapshot.topology, move->to_node,
                                  move->leave_nodes)
                  : std::nullopt;
  }
  // Judged against the node the IRQ was moved to: Decide chose it as its
  // consumers' node (their NET_RX time on their home nodes). Finding the
  // consumers again from one tick's runtime and NET_RX flipped between nodes
  // on a lightly loaded guest and reverted good moves.
  const auto& set = std::get<SetIrqAffinity>(action.op);
  const IrqSample* irq = FindIrq(snapshot, set.irq);
  const int node = NodeOfCpus(snapshot.topology, set.cpus);
  if (irq == nullptr || node < 0) return std::nullopt;
  return IrqBadness(*irq, node, snapshot);
}

std::optional<double> MemoryOffPinNode(const Action& action,
                                       const Snapshot& snapshot) {
  const auto* pin = std::get_if<PinThread>(&action.op);
  if (pin == nullptr) return std::nullopt;
  const Target* target = FindTarget(snapshot, WorkerOf(*pin));
  return target ? MemoryBadness(*target, snapshot.topology, pin->node,
                                LowerTierIds(snapshot.topology))
                : std::nullopt;
}

bool HasEntity(const Action& action, const Snapshot& snapshot) {
  if (const auto* set = std::get_if<SetIrqAffinity>(&action.op)) {
    return FindIrq(snapshot, set->irq) != nullptr;
  }
  int32_t pid = std::holds_alternative<PinThread>(action.op)
                    ? WorkerOf(std::get<PinThread>(action.op))
                    : std::get<MigratePages>(action.op).pid;
  return FindTarget(snapshot, pid) != nullptr;
}

}  // namespace locus
