// What the control loop remembers between ticks, so that Decide() can stay
// pure: each worker's home node, when each entity last moved, and which
// entities are held down after a revert. The loop owns it and updates it only
// with what was actually applied.
#ifndef LOCUS_POLICY_HISTORY_H_
#define LOCUS_POLICY_HISTORY_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "policy/plan.h"
#include "policy/snapshot.h"

namespace locus {

// The things that move. A worker's placement and its memory are separate
// entities: pages keep following the home node tick after tick (within the
// budget) while the worker itself stays put for its dwell time.
enum class EntityKind : uint8_t { kTask = 1, kMemory = 2, kIrq = 3 };

struct EntityKey {
  EntityKind kind = EntityKind::kTask;
  int32_t id = 0;  // pid for kTask/kMemory, IRQ number for kIrq

  friend bool operator==(const EntityKey& a, const EntityKey& b) {
    return a.kind == b.kind && a.id == b.id;
  }
  template <typename H>
  friend H AbslHashValue(H h, const EntityKey& key) {
    return H::combine(std::move(h), key.kind, key.id);
  }
};

struct EntityHistory {
  uint64_t last_move_ns = 0;   // 0 = never moved
  int node = -1;               // node it was last moved to
  uint64_t held_until_ns = 0;  // no moves before this time (after a revert)
  // Node our last move took it from; kSeveralNodes when it was on CPUs of
  // several, -1 unknown.
  int left_node = -1;
  // Memory only: when the last migration's whole pass found nothing left to
  // move (RecordSettled), so none is under way; 0 otherwise (a move clears
  // it).
  uint64_t settled_ns = 0;
  bool settled() const { return settled_ns != 0; }
  // Tasks only: the node id its soft home is widened to (PinThread::
  // spill_node), -1 when confined; and when it was last widened or
  // narrowed (0 never), which the spill's dwell runs from.
  int spill_node = -1;
  uint64_t spill_changed_ns = 0;
};

// Since when a node has been saturated, or calm (policy/pressure.h), as
// the loop saw it tick after tick; 0: not at the last tick.
struct NodePressureHistory {
  uint64_t saturated_since_ns = 0;
  uint64_t calm_since_ns = 0;
};

struct History {
  absl::flat_hash_map<EntityKey, EntityHistory> entities;
  // Per reuseport group (ListenGroupSample::name), per node id: the spill
  // (per mille) connection steering applies now, so that the next decision
  // knows how much load the node's workers already shed.
  absl::flat_hash_map<std::string, std::map<int, uint32_t>> spill_permille;
  // Per node id: how long it has been saturated or calm
  // (ObservePressure), so that a soft home widens only under sustained
  // pressure and narrows only after sustained calm.
  absl::flat_hash_map<int, NodePressureHistory> pressure;

  // The entry for `key`, or null when nothing is remembered.
  const EntityHistory* Find(EntityKey key) const {
    auto it = entities.find(key);
    return it == entities.end() ? nullptr : &it->second;
  }
};

// Records an action the actuators applied at `now_ns`: a PinThread makes its
// node the worker's home, a MigratePages records where memory went, a
// SetIrqAffinity the IRQ's new node (looked up in `topology`); pins and IRQ
// moves also keep the node they left (Action::from_node).
void RecordApplied(History& history, const Action& action,
                   const Topology& topology, uint64_t now_ns);

// After a MigratePages whose whole pass found nothing to move at `now_ns`:
// its memory is settled, and what is left off its node cannot move (pages
// shared with other processes, file pages). Decide does not ask again
// within the dwell time. Nothing moved, so its last move stays as it was.
void RecordSettled(History& history, const Action& action, uint64_t now_ns);

// After `action` was reverted: leave its entity alone until `until_ns` and
// forget the home it had given (the worker is back where it was). A reverted
// pin also holds down the worker's memory.
void HoldDown(History& history, const Action& action, uint64_t until_ns);

// Forgets processes and IRQs absent from `snapshot`, so that History stays
// the size of the live host (a reused pid starts afresh).
void PruneHistory(History& history, const Snapshot& snapshot);

// The entity an action moves.
EntityKey KeyOf(const Action& action);

// The node id all of `cpus` belong to; -1 when they span nodes or one is
// unknown.
int NodeOfCpus(const Topology& topology, const std::vector<int>& cpus);

// Where an entity on `cpus` is, as Action::from_node says it: their node id,
// kSeveralNodes when they are on several, -1 when none or one is unknown.
int FromNodeOf(const Topology& topology, const std::vector<int>& cpus);

}  // namespace locus

#endif  // LOCUS_POLICY_HISTORY_H_
