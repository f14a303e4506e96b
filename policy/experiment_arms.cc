#include "policy/experiment_arms.h"

#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/printable.h"

namespace locus {
namespace {

// Each lever's name and its flag, in LeverNames' order.
constexpr struct {
  const char* name;
  bool Levers::*flag;
} kLevers[] = {{"threads", &Levers::threads},
               {"pages", &Levers::pages},
               {"irqs", &Levers::irqs},
               {"connections", &Levers::connections}};

// Drops the plan's actions of type Op, with a note naming the lever.
template <typename Op>
void Hold(const char* what, const char* lever, Plan& plan) {
  const size_t before = plan.actions.size();
  std::erase_if(plan.actions, [](const Action& action) {
    return std::holds_alternative<Op>(action.op);
  });
  if (plan.actions.size() == before) return;
  plan.notes.push_back(
      absl::StrCat("experiment: ", before - plan.actions.size(), " ", what,
                   " held: ", lever, " is not a lever under test"));
}

}  // namespace

absl::StatusOr<Levers> ParseLevers(const std::vector<std::string>& names,
                                   bool switchback) {
  if (names.empty()) return Levers{};
  Levers levers;
  for (const auto& lever : kLevers) levers.*lever.flag = false;
  for (const std::string& name : names) {
    bool known = false;
    for (const auto& lever : kLevers) {
      if (name != lever.name) continue;
      if (levers.*lever.flag) {
        return absl::InvalidArgumentError(
            absl::StrCat("levers: '", Printable(name), "' given twice"));
      }
      levers.*lever.flag = known = true;
    }
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("levers: no lever '", Printable(name),
                       "' (threads, pages, irqs, connections)"));
    }
  }
  if (!switchback && !levers.threads && !levers.pages && !levers.connections) {
    return absl::InvalidArgumentError(
        "levers: irqs alone treats nothing: a NIC queue carries both arms' "
        "connections, so the A/B design holds IRQ moves (a switchback, "
        "--design=switchback, tests them)");
  }
  return levers;
}

std::vector<std::string> LeverNames(const Levers& levers) {
  std::vector<std::string> names;
  for (const auto& lever : kLevers) {
    if (levers.*lever.flag) names.push_back(lever.name);
  }
  return names;
}

Snapshot WithoutUnits(const Snapshot& snapshot,
                      const absl::flat_hash_set<int32_t>& untreated) {
  // Whole, then the untreated targets out: a field the snapshot gains later
  // comes along (field by field, the tiering figures once did not).
  Snapshot out = snapshot;
  std::erase_if(out.targets, [&](const Target& target) {
    return untreated.contains(target.pid);
  });
  return out;
}

void HoldLevers(const Levers& levers, Plan& plan) {
  if (!levers.threads) Hold<PinThread>("pin(s)", "threads", plan);
  if (!levers.pages) Hold<MigratePages>("page move(s)", "pages", plan);
  if (!levers.irqs) Hold<SetIrqAffinity>("IRQ move(s)", "irqs", plan);
  if (!levers.connections && !plan.connections.empty()) {
    plan.connections.clear();
    plan.notes.push_back(
        "experiment: connection steering held: connections is not a lever "
        "under test");
  }
}

void FitPlanToArms(const Snapshot& snapshot,
                   const absl::flat_hash_set<int32_t>& untreated,
                   const Levers& levers, Plan& plan) {
  Levers held = levers;
  held.irqs = true;  // dropped below whatever the levers, with its reason
  HoldLevers(held, plan);
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
