// The tasks of one reading, keyed by tid, as each sensor adds its figures:
// the first to see a task creates its entry, the others fill in theirs.
#ifndef LOCUS_AGENT_SENSORS_TASK_TABLE_H_
#define LOCUS_AGENT_SENSORS_TASK_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "agent/sensors/sensor_reading.h"

namespace locus {

// The processes a reading is limited to, ascending; nullopt: every task.
using TaskScope = std::optional<std::vector<int32_t>>;

class TaskTable {
 public:
  // Per-node vectors of new tasks get `num_nodes` elements.
  explicit TaskTable(int num_nodes) : num_nodes_(num_nodes) {}

  int num_nodes() const { return num_nodes_; }

  // Empties the table for a new reading, sized as the last one was, so it
  // is not regrown step by step.
  void Reset();
  // The task's entry, created with these ids and name if new.
  TaskCounters& Get(uint32_t tid, uint32_t pid, absl::string_view comm);
  // Moves the tasks in `scope` into `out`, ascending by tid: sources that
  // walk every task see more than the scope.
  void TakeSorted(const TaskScope& scope, std::vector<TaskCounters>& out);

 private:
  int num_nodes_;
  absl::flat_hash_map<int32_t, TaskCounters> tasks_;
  size_t last_size_ = 0;
};

// A name from a BPF record: at most `n` bytes, up to the first NUL.
template <size_t n>
absl::string_view CommOf(const char (&comm)[n]) {
  return absl::string_view(comm, strnlen(comm, n));
}

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_TASK_TABLE_H_
