#include "agent/core/verifier.h"

#include <optional>
#include <variant>

#include "agent/core/objective.h"

namespace locus {

void Verifier::Watch(const Action& action, const Snapshot& decided_on) {
  std::optional<double> before = Badness(action, decided_on);
  if (!before) return;
  watches_[KeyOf(action)] =
      Watched{action, *before, 0, 0, 0, MemoryOffPinNode(action, decided_on)};
}

bool Verifier::MemoryFollowed(const Watched& watch,
                              const Snapshot& snapshot) const {
  std::optional<double> now = MemoryOffPinNode(watch.action, snapshot);
  return watch.memory_before && now &&
         *now <= *watch.memory_before - options_.worse_by;
}

std::vector<Verdict> Verifier::Observe(const Snapshot& snapshot) {
  std::vector<Verdict> worse;
  for (auto it = watches_.begin(); it != watches_.end();) {
    Watched& watch = it->second;
    std::optional<double> now = Badness(watch.action, snapshot);
    ++watch.ticks;
    // A pin's own move is a cross-node migration in the tick after it (a
    // worker asleep when pinned makes it when it wakes): judged, it read as
    // the pin making things worse and reverted good pins (lab, 6.1, no NUMA
    // faults to judge by). That tick settles the pin and is not judged.
    const bool settling =
        watch.ticks == 1 && std::holds_alternative<PinThread>(watch.action.op);
    if (now && !settling) {
      watch.sum += *now;
      ++watch.seen;
    }
    // An entity that is gone, or that stays unmeasurable for long, cannot be
    // judged: stop watching it rather than hold the watch forever.
    bool give_up = (!now && !HasEntity(watch.action, snapshot)) ||
                   watch.ticks >= 3 * options_.watch_ticks;
    bool done = watch.seen >= options_.watch_ticks;
    if (!give_up && !done) {
      ++it;
      continue;
    }
    if (done) {
      double after = watch.sum / watch.seen;
      if (after > watch.before + options_.worse_by &&
          !MemoryFollowed(watch, snapshot)) {
        worse.push_back(Verdict{watch.action, watch.before, after});
      }
    }
    watches_.erase(it++);
  }
  return worse;
}

}  // namespace locus
