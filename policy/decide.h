// The policy engine: from one Snapshot, the Policy and the loop's History, the
// Plan for this tick. Pure: no clock (time is Snapshot::now_ns), no I/O, no
// globals, so the same inputs always give the same plan.
//
// Strategies (chosen by the policy):
//  - home node per worker: `spread` gives each node workers in proportion to
//    its usable CPUs, `near_nic` packs them onto the NIC's node up to
//    node_capacity workers per CPU, then the nearest nodes; workers keep the
//    home they have (History, then current pin, then where their memory is)
//    whenever the node's share allows;
//  - memory follows threads: a worker on its home node whose faults (or, with
//    too few faults, pages) are mostly elsewhere gets its pages moved home;
//  - IRQs follow consumers: a NIC's queue IRQs are shared among nodes in
//    proportion to their workers' NET_RX softirq time, each going to the CPU
//    of its node with the least softirq time.
// Anti ping-pong: a move needs expected gain >= stability.min_gain; a moved
// entity does not move to another node within stability.dwell_s; held-down
// entities are left alone; at most max_moves_per_tick entities move (all
// threads of one worker are one move); page migration stays within
// memory.budget_mb_per_s and the target node's free-memory reserve; an entity
// already where it belongs is never touched, so a converged host gets an empty
// plan. Fewer than two nodes with CPUs gives an empty plan with a note.
#ifndef LOCUS_POLICY_DECIDE_H_
#define LOCUS_POLICY_DECIDE_H_

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "locus/v1/policy.pb.h"
#include "policy/history.h"
#include "policy/plan.h"
#include "policy/snapshot.h"

namespace locus {

Plan Decide(const Snapshot& snapshot, const v1::Policy& policy,
            const History& history);

// The home node id Decide() gives each worker this tick, by the worker's pid
// (thread workers by tid); a worker without one is absent, and so is every
// worker of a host with fewer than two nodes with CPUs. What the experiment
// stratifies on: the node the design puts a treated worker on, not the one
// an unpinned worker happens to run on.
absl::flat_hash_map<int32_t, int> HomesOf(const Snapshot& snapshot,
                                          const v1::Policy& policy,
                                          const History& history);

}  // namespace locus

#endif  // LOCUS_POLICY_DECIDE_H_
