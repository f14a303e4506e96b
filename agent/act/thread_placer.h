// Thread placement: sched_setaffinity per TID, journaled first, intersected
// with the task's cpuset, and backing off from threads someone else moved.
#ifndef LOCUS_AGENT_ACT_THREAD_PLACER_H_
#define LOCUS_AGENT_ACT_THREAD_PLACER_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "agent/act/external_change.h"
#include "agent/act/kernel_ops.h"
#include "agent/act/result.h"
#include "agent/journal/journal.h"
#include "policy/plan.h"

namespace locus {

class ThreadPlacer {
 public:
  // `ops` and `journal` are borrowed and must outlive the placer.
  ThreadPlacer(ThreadOps* ops, Journal* journal, bool dry_run)
      : ops_(ops), journal_(journal), dry_run_(dry_run) {}

  // With dry_run (or a placer made dry-run) nothing is changed or journaled.
  ActionResult Apply(const PinThread& pin) { return Apply(pin, dry_run_); }
  ActionResult Apply(const PinThread& pin, bool dry_run);

  // Puts one thread back to its journaled original and forgets it (the loop
  // undoing a move that made things worse). OK when there is nothing to
  // undo or the thread is gone.
  absl::Status Revert(int32_t tid);

  // For threads Locus has set: gone => its entry is dropped silently;
  // affinity no longer what Locus set => backed off (never touched again),
  // journal entry forgotten, and reported. Each call checks up to
  // kCheckAtOnce threads or a fifth of them, whichever is more, in turn:
  // with a thousand pinned, one syscall each every tick was half the
  // agent's CPU. A thread Locus is asked to pin again is checked then
  // (Apply), so an unchecked change is never overwritten; what Apply finds
  // is reported here too.
  std::vector<ExternalChange> CheckExternalChanges();
  static constexpr size_t kCheckAtOnce = 64;

  bool BackedOff(int32_t tid) const { return backed_off_.count(tid) > 0; }

 private:
  struct Placed {
    int32_t pid = 0;
    uint64_t start_time = 0;
    std::vector<int> cpus;
    uint32_t checks = 0;  // CheckExternalChanges visits since placed
  };
  // Forgets what Locus placed on `tid` when the TID now names another thread.
  void ForgetIfRecycled(int32_t tid, uint64_t start_time);
  // Journals `entry` (the thread's affinity now), then sets `target`.
  ActionResult Pin(const PinThread& pin, const ThreadEntry& entry,
                   const std::vector<int>& target, const std::string& change);
  // Backs off `tid`, whose affinity is `now`, not what Locus set.
  ExternalChange BackOff(std::map<int32_t, Placed>::iterator placed,
                         std::vector<int> now);
  ThreadOps* ops_;
  Journal* journal_;
  bool dry_run_;
  std::map<int32_t, Placed> placed_;  // by tid: what Locus set
  std::set<int32_t> backed_off_;
  int32_t next_check_ = 0;  // CheckExternalChanges resumes at this tid
  std::vector<ExternalChange> noticed_;  // by Apply, not yet reported
};

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_THREAD_PLACER_H_
