// What the loop decided about each entity, kept for `locusctl explain`: the
// last few notes per thread's process, per process's memory and per IRQ.
// Written by the loop thread, read by RPC threads.
#ifndef LOCUS_AGENT_CORE_EXPLAIN_HISTORY_H_
#define LOCUS_AGENT_CORE_EXPLAIN_HISTORY_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "policy/history.h"
#include "policy/snapshot.h"

namespace locus {

// One line of an entity's story.
struct Decision {
  uint64_t tick = 0;
  uint64_t now_ns = 0;
  std::string what;  // "applied: pin to node 1 cpus 8-15 (82% remote ...)"
};

// "pid 4242 (nginx): not trusted as a target: its executable ... is owned by
// uid 65534, not root": what explain answers for it and the log says once.
// The reason is cut after kMaxRefusalReasonBytes ("…(+N bytes)"); nothing
// is escaped (common/printable.h: the sinks and explain do that).
inline constexpr size_t kMaxRefusalReasonBytes = 512;
std::string RefusalMessage(const RefusedProcess& process);

class ExplainHistory {
 public:
  // Keeps the last `depth` decisions per entity.
  explicit ExplainHistory(size_t depth) : depth_(depth) {}

  void Note(EntityKey key, uint64_t tick, uint64_t now_ns, std::string what);

  // Learns which process each of the snapshot's threads belongs to, and
  // forgets the stories of processes that are gone, so memory stays bounded.
  void RememberThreads(const Snapshot& snapshot);

  // Keeps the snapshot's refused processes (in place of the last ones);
  // returns those that were not refused (or not for that reason) in the
  // last call, for the log to
  // name each look-alike once rather than every tick.
  std::vector<RefusedProcess> RememberRefused(const Snapshot& snapshot);

  // The last decisions about a process (by pid or any of its tids: its
  // threads' and its memory's, oldest first) or an IRQ; empty when none.
  std::vector<Decision> Task(int32_t tid) const;
  std::vector<Decision> Irq(int irq) const;
  // Why process `pid` was left out of the last snapshot's targets; nullopt
  // when it was not selected or is a target.
  std::optional<RefusedProcess> Refused(int32_t pid) const;

 private:
  const size_t depth_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<EntityKey, std::deque<Decision>> stories_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<int32_t, int32_t> tid_pid_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<int32_t, RefusedProcess> refused_ ABSL_GUARDED_BY(mu_);
};

}  // namespace locus

#endif  // LOCUS_AGENT_CORE_EXPLAIN_HISTORY_H_
