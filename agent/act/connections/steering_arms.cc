#include "agent/act/connections/steering_arms.h"

#include <set>
#include <vector>

#include "absl/strings/str_cat.h"

namespace locus {
namespace {

void AddProblem(std::string* problem, const std::string& what) {
  if (problem == nullptr) return;
  if (!problem->empty()) problem->append("; ");
  problem->append(what);
}

// The slots of `inodes`, each once, in their order.
std::vector<uint32_t> SlotsOf(const std::vector<uint64_t>& inodes,
                              const std::map<uint64_t, uint32_t>& slot_of,
                              std::set<uint64_t>& seen, std::string* problem) {
  std::vector<uint32_t> slots;
  for (uint64_t inode : inodes) {
    if (!seen.insert(inode).second) continue;
    auto slot = slot_of.find(inode);
    if (slot == slot_of.end()) {
      AddProblem(problem, absl::StrCat("experiment: socket inode ", inode,
                                       " not in the socket array"));
      continue;
    }
    slots.push_back(slot->second);
  }
  return slots;
}

}  // namespace

ReuseportArms ArmsOf(const GroupSteering& steering,
                     const std::map<uint64_t, uint32_t>& slot_of,
                     const ReuseportLimits& limits, std::string* problem) {
  ReuseportArms arms;
  if (steering.control.empty()) return arms;
  std::set<uint64_t> seen;
  arms.control = SlotsOf(steering.control, slot_of, seen, problem);
  if (arms.control.empty()) return {};  // none left: no experiment to keep
  if (arms.control.size() > limits.node_slots) {
    AddProblem(problem, absl::StrCat("experiment: ", arms.control.size(),
                                     " control sockets, the control row holds ",
                                     limits.node_slots, ": ",
                                     arms.control.size() - limits.node_slots,
                                     " left out"));
    arms.control.resize(limits.node_slots);
  }
  for (const auto& [node, sockets] : steering.nodes) {
    // One with no slot is said by the node table already.
    std::vector<uint32_t> slots =
        SlotsOf(sockets.inodes, slot_of, seen, nullptr);
    arms.treated.insert(arms.treated.end(), slots.begin(), slots.end());
  }
  // Every treated socket takes its local share; only the spill's spread is
  // limited to the row's first ones.
  const uint64_t all = arms.control.size() + arms.treated.size();
  arms.control_share = static_cast<uint32_t>(
      (uint64_t{kReuseportArmScale} * arms.control.size() + all / 2) / all);
  if (arms.treated.size() > limits.node_slots) {
    AddProblem(problem,
               absl::StrCat("experiment: ", arms.treated.size(),
                            " treated sockets, the treated row holds ",
                            limits.node_slots, ": the spill goes to the first ",
                            limits.node_slots, " only"));
    arms.treated.resize(limits.node_slots);
  }
  return arms;
}

absl::Status ValidateArms(const GroupSteering& steering) {
  if (steering.control.empty()) return absl::OkStatus();
  std::set<uint64_t> control(steering.control.begin(), steering.control.end());
  for (const auto& [node, sockets] : steering.nodes) {
    for (uint64_t inode : sockets.inodes) {
      if (control.count(inode)) {
        return absl::InvalidArgumentError(
            absl::StrCat("plan: socket inode ", inode,
                         " is in the control arm and on node ", node));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace locus
