#include "policy/experiment_arms.h"

#include <variant>

#include "absl/strings/str_cat.h"

namespace locus {

Snapshot WithoutUnits(const Snapshot& snapshot,
                      const absl::flat_hash_set<int32_t>& untreated) {
  Snapshot out;
  out.now_ns = snapshot.now_ns;
  out.tick_ns = snapshot.tick_ns;
  out.numa_balancing_mode = snapshot.numa_balancing_mode;
  out.topology = snapshot.topology;
  out.cpus = snapshot.cpus;
  out.refused_targets = snapshot.refused_targets;
  out.irqs = snapshot.irqs;
  out.listen_groups = snapshot.listen_groups;
  out.targets.reserve(snapshot.targets.size());
  for (const Target& target : snapshot.targets) {
    if (!untreated.contains(target.pid)) out.targets.push_back(target);
  }
  return out;
}

void FitPlanToArms(const Snapshot& snapshot,
                   const absl::flat_hash_set<int32_t>& untreated, Plan& plan) {
  const size_t before = plan.actions.size();
  std::erase_if(plan.actions, [](const Action& action) {
    return std::holds_alternative<SetIrqAffinity>(action.op);
  });
  if (plan.actions.size() != before) {
    plan.notes.push_back(absl::StrCat(
        "experiment: ", before - plan.actions.size(),
        " IRQ move(s) held: a NIC queue carries both arms' connections"));
  }
  for (ListenGroupSteering& steer : plan.connections) {
    steer.control_inodes.clear();
    for (const ListenGroupSample& group : snapshot.listen_groups) {
      if (group.name != steer.group) continue;
      for (const ListenSocketSample& socket : group.sockets) {
        if (socket.owner_pid != 0 && untreated.contains(socket.owner_pid))
          steer.control_inodes.push_back(socket.inode);
      }
    }
    if (!steer.control_inodes.empty()) {
      absl::StrAppend(&steer.reason,
                      "; experiment: ", steer.control_inodes.size(),
                      " control socket(s) take their share by hash");
    }
  }
}

}  // namespace locus
