// The output of Decide(): actions for the actuators, each with its reason.
#ifndef LOCUS_POLICY_PLAN_H_
#define LOCUS_POLICY_PLAN_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace locus {

// Restrict a thread to `cpus` (a node's CPUs, or one CPU).
struct PinThread {
  int32_t pid = 0;  // its process
  int32_t tid = 0;
  int node = -1;
  std::vector<int> cpus;
  // The thread is a worker of its own (a thread worker), not one thread of
  // a worker process: WorkerOf.
  bool thread_worker = false;
  // A soft home widened under pressure: `cpus` also holds this node id's,
  // while `node` stays its home (memory keeps to it). -1: confined to node.
  int spill_node = -1;
};

// A pin that widens a soft home beyond its node (placement.spill).
inline bool Widens(const PinThread& pin) { return pin.spill_node >= 0; }

// The worker a pin places, as Target::pid names it: the process, or for a
// thread worker the thread.
inline int32_t WorkerOf(const PinThread& pin) {
  return pin.thread_worker ? pin.tid : pin.pid;
}

// Move up to `max_bytes` of a process's pages to `to_node`; from_node -1 means
// from any other node.
struct MigratePages {
  int32_t pid = 0;
  int from_node = -1;
  int to_node = 0;
  uint64_t max_bytes = 0;
  // Node ids whose pages stay where they are: those without CPUs
  // (policy/tiers.h), which the kernel (demotion, tiering promotion), DAMON
  // or a binding manage.
  std::vector<int> leave_nodes = {};
};

struct SetIrqAffinity {
  int irq = 0;
  std::vector<int> cpus;
};

using ActionOp = std::variant<PinThread, MigratePages, SetIrqAffinity>;

// Action::from_node of an entity whose CPUs were on several nodes.
inline constexpr int kSeveralNodes = -2;

struct Action {
  ActionOp op;
  std::string
      reason;  // why, with the numbers: "82% remote faults on node 1 ..."
  double expected_gain = 0;  // objective improvement the policy expects, 0..1
  // PinThread, SetIrqAffinity: the node id the entity leaves; kSeveralNodes
  // when its CPUs were on several, -1 when unknown. History keeps it to
  // refuse moving it straight back.
  int from_node = -1;
};

// How one reuseport group's new connections are steered: per node, the
// sockets of the workers that are to run there, and the share of the
// node's new connections left to the kernel's hash over every worker.
// Not an action: the whole group's steering is stated every tick and the
// actuator updates its maps only where they differ.
struct NodeSteering {
  int node = -1;  // node id
  std::vector<uint64_t> inodes;
  uint32_t spill_permille = 0;
  bool operator==(const NodeSteering&) const = default;
};
struct ListenGroupSteering {
  std::string group;                // ListenGroupSample::name
  std::vector<NodeSteering> nodes;  // by node id; nodes without workers too
  // During an experiment, the control arm's sockets: their workers' share
  // of new connections goes to them by hash, the rest is steered as the
  // nodes say. Decide never fills it (policy/experiment_arms.h does).
  std::vector<uint64_t> control_inodes;
  std::string reason;  // "2 workers on node 0, 2 on node 1; node 1 at 93% busy
                       // spills 14%"
};

// The steering `plan` states for `group`; null when it leaves the group out.
inline const ListenGroupSteering* FindSteering(
    const std::vector<ListenGroupSteering>& plan, const std::string& group) {
  for (const ListenGroupSteering& steer : plan) {
    if (steer.group == group) return &steer;
  }
  return nullptr;
}

struct Plan {
  std::vector<Action> actions;
  // Groups to steer; a group of the snapshot absent here is not steered.
  std::vector<ListenGroupSteering> connections;
  // Why the plan is what it is when that is not obvious from the actions,
  // e.g. "1 NUMA node: nothing to balance", "converged".
  std::vector<std::string> notes;
};

}  // namespace locus

#endif  // LOCUS_POLICY_PLAN_H_
