// The loop's side of an experiment (agent/experiment/): the workers it
// puts back, and a switchback's off blocks.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "agent/core/event_log.h"
#include "agent/core/loop.h"
#include "common/log.h"

namespace locus {

ArmsThisTick Loop::Arms(const Snapshot& snap, TickReport& report) {
  if (experiment_ == nullptr) return {};
  auto arms = experiment_->OnTick(snap, report.mode, report.policy, history_);
  report.experiment = arms.report;
  if (arms.off) SwitchOff(arms.restore, report);
  for (int32_t pid : arms.release) {
    // Back as the server left it: each journaled pin restored (a thread
    // never pinned has no entry, and Revert leaves it), its page moves
    // dropped, and no memory of a home or a watch left to act on.
    auto target = std::find_if(snap.targets.begin(), snap.targets.end(),
                               [&](const Target& t) { return t.pid == pid; });
    if (target == snap.targets.end()) continue;
    Action action;
    absl::Status status;
    for (const ThreadSample& thread : target->threads) {
      action.op = PinThread{pid, thread.tid, -1, {}};
      if (absl::Status s = executor_->Revert(action); !s.ok()) status = s;
    }
    action.op = MigratePages{pid, -1, 0, 0};
    status.Update(executor_->Revert(action));
    for (EntityKind kind : {EntityKind::kTask, EntityKind::kMemory}) {
      history_.entities.erase(EntityKey{kind, pid});
      verifier_.Forget(EntityKey{kind, pid});
    }
    const std::string what = absl::StrCat(
        "experiment: worker ", pid, " left alone (put back as it was",
        status.ok() ? "" : ": " + status.ToString(), ")");
    if (status.ok()) {
      LogInfo(what);
    } else {
      LogWarning(what);
    }
    explain_.Note({EntityKind::kTask, pid}, report.tick, report.now_ns, what);
  }
  return arms;
}

void Loop::SwitchOff(bool restore, TickReport& report) {
  // The rest of the tick runs as a dry run: planned, shown, not carried out.
  report.mode = v1::Policy::MODE_DRY_RUN;
  executor_->StopPageMoves();
  if (!restore) return;
  const absl::Status status = executor_->PutBack();
  // What was watched is put back: nothing of it to judge or revert. The
  // homes stay, so the next on block places each worker where it was.
  verifier_.ForgetAll();
  const std::string what = absl::StrCat(
      "experiment: switchback off block: everything Locus changed put back",
      status.ok() ? "" : ": " + status.ToString());
  if (status.ok()) {
    LogInfo(what);
  } else {
    LogWarning(what);
  }
}

}  // namespace locus
