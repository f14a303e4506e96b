// What an A/B experiment changes in one tick's decision: the policy decides
// for the treated workers only (a snapshot without the units left alone),
// and the plan it makes is then fitted to the arms: the control arm's
// listening sockets take their fair share of new connections by hash, and
// no IRQ moves, since a NIC queue carries both arms' connections (changing
// it would treat the control arm too). Pure, like Decide.
#ifndef LOCUS_POLICY_EXPERIMENT_ARMS_H_
#define LOCUS_POLICY_EXPERIMENT_ARMS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "policy/plan.h"
#include "policy/snapshot.h"

namespace locus {

// The levers the treated arm gets (`--levers`): one kind of what Decide
// does each, so that an operator learns which one helps their host. One
// left out acts on neither arm.
struct Levers {
  bool threads = true;      // pins (PinThread)
  bool pages = true;        // page moves (MigratePages)
  bool irqs = true;         // NIC IRQ moves: the A/B design holds them
  bool connections = true;  // sk_reuseport steering of new connections
};

// Levers from their names ("threads", "pages", "irqs", "connections");
// none: all four. An unknown or repeated name is an error naming it, and so
// is a set that treats nothing in the A/B design (irqs alone), unless
// `switchback` (the whole host alternates: IRQ moves are tested too).
absl::StatusOr<Levers> ParseLevers(const std::vector<std::string>& names,
                                   bool switchback = false);

// The names of the levers set, in the order above.
std::vector<std::string> LeverNames(const Levers& levers);

// Holds the actions of a lever not under test, each kind with a note:
// pins, page moves, connection steering as a whole, and IRQ moves (which
// only a switchback can test).
void HoldLevers(const Levers& levers, Plan& plan);

// `snapshot` without the targets whose pid is in `untreated`.
Snapshot WithoutUnits(const Snapshot& snapshot,
                      const absl::flat_hash_set<int32_t>& untreated);

// Fits `plan` (decided on WithoutUnits) to the arms: IRQ actions are
// dropped with a note, and so are those of a lever not under test (pins,
// page moves; connection steering as a whole); each steered group lists the
// sockets of `untreated` workers as its control sockets. A group the plan
// does not steer stays unsteered: the kernel's hash is fair to both arms.
void FitPlanToArms(const Snapshot& snapshot,
                   const absl::flat_hash_set<int32_t>& untreated,
                   const Levers& levers, Plan& plan);

}  // namespace locus

#endif  // LOCUS_POLICY_EXPERIMENT_ARMS_H_
