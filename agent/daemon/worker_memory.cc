#include "agent/daemon/worker_memory.h"

#include "absl/container/flat_hash_set.h"

namespace locus {

void AddWorkerMemory(const v1::Metrics& metrics, v1::AgentStatus& status) {
  absl::flat_hash_set<int32_t> seen;
  for (const v1::TaskMetrics& task : metrics.tasks()) {
    if (task.role() != v1::TASK_ROLE_WORKER &&
        task.role() != v1::TASK_ROLE_WORKER_THREAD) {
      continue;
    }
    if (!seen.insert(task.pid()).second) continue;
    v1::WorkerMemory* memory = status.add_worker_memory();
    memory->set_pid(task.pid());
    memory->set_comm(task.comm());
    memory->set_home_node(task.role() == v1::TASK_ROLE_WORKER ? task.home_node()
                                                              : -1);
    *memory->mutable_resident_bytes() = task.resident_bytes();
  }
}

}  // namespace locus
