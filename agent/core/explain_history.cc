#include "agent/core/explain_history.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/printable.h"

namespace locus {

std::string RefusalMessage(const RefusedProcess& process) {
  // The reason quotes the executable's path, up to 4 KB of it; the comm is
  // the kernel's 15 bytes. Escaping is left to where the text is shown (the
  // text log's sinks, explain's answer), so that JSON lines escape it once.
  return absl::StrCat("pid ", process.pid, " (", Clip(process.comm),
                      "): ", Clip(process.reason, kMaxRefusalReasonBytes));
}

void ExplainHistory::Note(EntityKey key, uint64_t tick, uint64_t now_ns,
                          std::string what) {
  absl::MutexLock lock(&mu_);
  std::deque<Decision>& story = stories_[key];
  story.push_back(Decision{tick, now_ns, std::move(what)});
  while (story.size() > depth_) story.pop_front();
}

void ExplainHistory::RememberThreads(const Snapshot& snapshot) {
  absl::MutexLock lock(&mu_);
  tid_pid_.clear();
  for (const Target& target : snapshot.targets) {
    tid_pid_[target.pid] = target.pid;
    for (const ThreadSample& thread : target.threads) {
      tid_pid_[thread.tid] = target.pid;
    }
  }
  absl::erase_if(stories_, [&](const auto& entry) {
    return entry.first.kind != EntityKind::kIrq &&
           !tid_pid_.contains(entry.first.id);
  });
}

std::vector<RefusedProcess> ExplainHistory::RememberRefused(
    const Snapshot& snapshot) {
  absl::flat_hash_map<int32_t, RefusedProcess> now;
  std::vector<RefusedProcess> fresh;
  absl::MutexLock lock(&mu_);
  for (const RefusedProcess& process : snapshot.refused_targets) {
    // A pid refused for another reason is another process (or the same one
    // after an exec): news too.
    auto last = refused_.find(process.pid);
    if (last == refused_.end() || last->second.reason != process.reason) {
      fresh.push_back(process);
    }
    now[process.pid] = process;
  }
  refused_ = std::move(now);
  return fresh;
}

std::vector<Decision> ExplainHistory::Task(int32_t tid) const {
  absl::MutexLock lock(&mu_);
  auto pid = tid_pid_.find(tid);
  int32_t id = pid == tid_pid_.end() ? tid : pid->second;
  std::vector<Decision> out;
  for (EntityKind kind : {EntityKind::kTask, EntityKind::kMemory}) {
    auto it = stories_.find(EntityKey{kind, id});
    if (it != stories_.end())
      out.insert(out.end(), it->second.begin(), it->second.end());
  }
  std::sort(out.begin(), out.end(), [](const Decision& a, const Decision& b) {
    return a.tick < b.tick;
  });
  return out;
}

std::vector<Decision> ExplainHistory::Irq(int irq) const {
  absl::MutexLock lock(&mu_);
  auto it = stories_.find(EntityKey{EntityKind::kIrq, irq});
  if (it == stories_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

std::optional<RefusedProcess> ExplainHistory::Refused(int32_t pid) const {
  absl::MutexLock lock(&mu_);
  auto it = refused_.find(pid);
  if (it == refused_.end()) return std::nullopt;
  return it->second;
}

}  // namespace locus
