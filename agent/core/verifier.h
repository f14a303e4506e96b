// The closed loop: after an action is applied, its objective (objective.h) is
// watched for a few ticks; an action that made things worse is handed back to
// be reverted. Pure bookkeeping over snapshots, no clock and no I/O.
#ifndef LOCUS_AGENT_CORE_VERIFIER_H_
#define LOCUS_AGENT_CORE_VERIFIER_H_

#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "policy/history.h"
#include "policy/plan.h"
#include "policy/snapshot.h"

namespace locus {

struct VerifierOptions {
  // Ticks an action is watched after it was applied.
  int watch_ticks = 3;
  // Revert when the mean badness over the window exceeds the badness before
  // the action by more than this (absolute, badness is 0..1).
  double worse_by = 0.10;
};

struct Verdict {
  Action action;
  double before = 0;  // badness on the snapshot the action was decided on
  double after = 0;   // mean badness over the watch window
};

class Verifier {
 public:
  explicit Verifier(VerifierOptions options) : options_(options) {}

  // Starts watching `action`, applied after `decided_on`. An action without a
  // measurable objective on that snapshot is not watched. A newer action on
  // the same entity replaces the older one's watch.
  void Watch(const Action& action, const Snapshot& decided_on);

  // Feeds one tick's snapshot. Returns the actions whose window ended worse
  // than before (to revert); those that ended well are forgotten, and so are
  // those whose entity is gone.
  std::vector<Verdict> Observe(const Snapshot& snapshot);

  // Stops watching an entity (changed by someone else, or reverted).
  void Forget(EntityKey key) { watches_.erase(key); }
  void ForgetAll() { watches_.clear(); }

  size_t watching() const { return watches_.size(); }

 private:
  struct Watched {
    Action action;
    double before = 0;
    double sum = 0;
    int seen = 0;   // ticks with a measurement
    int ticks = 0;  // ticks since the action
    // A pin: its worker's resident pages off the pin's node when decided.
    std::optional<double> memory_before;
  };
  // A pin whose worker's memory came after it during the window (its pages
  // off the new node fell by worse_by or more): faults on memory not there
  // yet are remote until it is, so they do not make the pin a mistake.
  bool MemoryFollowed(const Watched& watch, const Snapshot& snapshot) const;

  VerifierOptions options_;
  absl::flat_hash_map<EntityKey, Watched> watches_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_CORE_VERIFIER_H_
