#include "policy/history.h"

#include <algorithm>
#include <type_traits>

#include "absl/container/flat_hash_set.h"

namespace locus {

int NodeOfCpus(const Topology& topology, const std::vector<int>& cpus) {
  int node = -1;
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= static_cast<int>(topology.cpu_node.size())) {
      return -1;
    }
    int n = topology.cpu_node[cpu];
    if (node != -1 && n != node) return -1;
    node = n;
  }
  return node;
}

int FromNodeOf(const Topology& topology, const std::vector<int>& cpus) {
  int node = -1;
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= static_cast<int>(topology.cpu_node.size()) ||
        topology.cpu_node[cpu] < 0) {
      return -1;
    }
    const int n = topology.cpu_node[cpu];
    node = node == -1 || node == n ? n : kSeveralNodes;
  }
  return node;
}

EntityKey KeyOf(const Action& action) {
  return std::visit(
      [](const auto& op) -> EntityKey {
        using T = std::decay_t<decltype(op)>;
        if constexpr (std::is_same_v<T, PinThread>) {
          return {EntityKind::kTask, WorkerOf(op)};
        } else if constexpr (std::is_same_v<T, MigratePages>) {
          return {EntityKind::kMemory, op.pid};
        } else {
          return {EntityKind::kIrq, op.irq};
        }
      },
      action.op);
}

void RecordApplied(History& history, const Action& action,
                   const Topology& topology, uint64_t now_ns) {
  EntityHistory& entry = history.entities[KeyOf(action)];
  entry.last_move_ns = now_ns;
  entry.settled_ns = 0;
  if (const auto* pin = std::get_if<PinThread>(&action.op)) {
    entry.node = pin->node;
    entry.left_node = action.from_node;
    if (entry.spill_node != pin->spill_node) {
      entry.spill_node = pin->spill_node;
      entry.spill_changed_ns = now_ns;
    }
  } else if (const auto* migrate = std::get_if<MigratePages>(&action.op)) {
    entry.node = migrate->to_node;
  } else if (const auto* irq = std::get_if<SetIrqAffinity>(&action.op)) {
    entry.node = NodeOfCpus(topology, irq->cpus);
    entry.left_node = action.from_node;
  }
}

void RecordSettled(History& history, const Action& action, uint64_t now_ns) {
  EntityHistory& entry = history.entities[KeyOf(action)];
  entry.settled_ns = now_ns;
}

void HoldDown(History& history, const Action& action, uint64_t until_ns) {
  EntityKey key = KeyOf(action);
  EntityHistory& entry = history.entities[key];
  entry.held_until_ns = until_ns;
  entry.node = -1;
  if (key.kind == EntityKind::kTask) {
    EntityHistory& memory =
        history.entities[EntityKey{EntityKind::kMemory, key.id}];
    memory.held_until_ns = until_ns;
    memory.node = -1;
  }
}

void PruneHistory(History& history, const Snapshot& snapshot) {
  absl::flat_hash_set<int32_t> pids;
  absl::flat_hash_set<int32_t> irqs;
  for (const Target& target : snapshot.targets) pids.insert(target.pid);
  for (const IrqSample& irq : snapshot.irqs) irqs.insert(irq.irq);
  absl::erase_if(history.entities, [&](const auto& entry) {
    const EntityKey& key = entry.first;
    return key.kind == EntityKind::kIrq ? !irqs.contains(key.id)
                                        : !pids.contains(key.id);
  });
  absl::erase_if(history.spill_permille, [&](const auto& entry) {
    return std::none_of(
        snapshot.listen_groups.begin(), snapshot.listen_groups.end(),
        [&](const ListenGroupSample& g) { return g.name == entry.first; });
  });
}

}  // namespace locus
