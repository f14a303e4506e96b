#include "agent/sensors/task_table.h"

#include <algorithm>
#include <string>
#include <utility>

namespace locus {

void TaskTable::Reset() {
  tasks_.clear();
  tasks_.reserve(last_size_);
}

TaskCounters& TaskTable::Get(uint32_t tid, uint32_t pid,
                             absl::string_view comm) {
  auto [it, inserted] = tasks_.try_emplace(static_cast<int32_t>(tid));
  TaskCounters& t = it->second;
  if (inserted) {
    t.tid = static_cast<int32_t>(tid);
    t.pid = static_cast<int32_t>(pid);
    t.comm = std::string(comm);
    t.runtime_ns.assign(num_nodes_, 0);
  }
  return t;
}

void TaskTable::TakeSorted(const TaskScope& scope,
                           std::vector<TaskCounters>& out) {
  last_size_ = tasks_.size();
  out.reserve(tasks_.size());
  for (auto& [tid, t] : tasks_) {
    if (scope && !std::binary_search(scope->begin(), scope->end(), t.pid)) {
      continue;
    }
    out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end(),
            [](const TaskCounters& a, const TaskCounters& b) {
              return a.tid < b.tid;
            });
  tasks_.clear();
}

}  // namespace locus
