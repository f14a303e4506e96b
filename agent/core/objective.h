// What each kind of action is meant to improve, measured on a snapshot, so the
// loop can check after the fact that an action helped (the closed loop).
// Every objective is a "badness" in 0..1: lower is better.
#ifndef LOCUS_AGENT_CORE_OBJECTIVE_H_
#define LOCUS_AGENT_CORE_OBJECTIVE_H_

#include <optional>

#include "policy/plan.h"
#include "policy/snapshot.h"

namespace locus {

// Fewer hinting faults than this in a tick say too little to judge by.
inline constexpr uint64_t kMinFaultsToJudge = 16;

// PinThread: the share of the process's NUMA faults on its new node's
// memory that were remote (with too few of those: of all its faults; with
// too few faults: the share of its threads' migrations that crossed a node).
// MigratePages: the share of the process's resident pages off the target node,
// of those on nodes it may take from (those without CPUs are left).
// SetIrqAffinity: the share of the IRQ's interrupts served off the node it
// was moved to (the node Decide found its consumers on). nullopt when the
// entity is gone or the tick carries nothing to judge by.
std::optional<double> Badness(const Action& action, const Snapshot& snapshot);

// PinThread only: the share of the worker's resident pages off the node it
// was pinned to, nodes without CPUs left out; nullopt for other actions or
// when unknown.
std::optional<double> MemoryOffPinNode(const Action& action,
                                       const Snapshot& snapshot);

// Whether the process or IRQ the action moves is in the snapshot.
bool HasEntity(const Action& action, const Snapshot& snapshot);

}  // namespace locus

#endif  // LOCUS_AGENT_CORE_OBJECTIVE_H_
