// What an A/B experiment changes in one tick's decision: the policy decides
// for the treated workers only (a snapshot without the units left alone),
// and the plan it makes is then fitted to the arms: the control arm's
// listening sockets take their fair share of new connections by hash, and
// no IRQ moves, since a NIC queue carries both arms' connections (changing
// it would treat the control arm too). Pure, like Decide.
#ifndef LOCUS_POLICY_EXPERIMENT_ARMS_H_
#define LOCUS_POLICY_EXPERIMENT_ARMS_H_

#include <cstdint>

#include "absl/container/flat_hash_set.h"
#include "policy/plan.h"
#include "policy/snapshot.h"

namespace locus {

// `snapshot` without the targets whose pid is in `untreated`.
Snapshot WithoutUnits(const Snapshot& snapshot,
                      const absl::flat_hash_set<int32_t>& untreated);

// Fits `plan` (decided on WithoutUnits) to the arms: IRQ actions are
// dropped with a note, and each steered group lists the sockets of
// `untreated` workers as its control sockets. A group the plan does not
// steer stays unsteered: the kernel's hash is fair to both arms.
void FitPlanToArms(const Snapshot& snapshot,
                   const absl::flat_hash_set<int32_t>& untreated, Plan& plan);

}  // namespace locus

#endif  // LOCUS_POLICY_EXPERIMENT_ARMS_H_
