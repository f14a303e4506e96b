#include "agent/core/explain_history.h"

#include <algorithm>
#include <utility>

namespace locus {

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

}  // namespace locus
