#include "agent/daemon/worker_memory.h"

#include <tuple>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using ::testing::ElementsAre;

TEST(WorkerMemoryTest, OncePerWorkerProcessWithItsHome) {
  v1::Metrics m;
  // Worker 10 (two threads, homed on node 1), a process of thread workers
  // (20: its threads' homes are theirs, not its memory's), and a master,
  // whose memory is not a worker's.
  for (auto [pid, home, role] : {std::tuple{10, 1, v1::TASK_ROLE_WORKER},
                                 std::tuple{10, 1, v1::TASK_ROLE_WORKER},
                                 std::tuple{20, 0, v1::TASK_ROLE_WORKER_THREAD},
                                 std::tuple{20, 1, v1::TASK_ROLE_WORKER_THREAD},
                                 std::tuple{30, -1, v1::TASK_ROLE_MASTER}}) {
    v1::TaskMetrics* task = m.add_tasks();
    task->set_pid(pid);
    task->set_comm("nginx");
    task->set_home_node(home);
    task->set_role(role);
    task->add_resident_bytes(pid * 1000);
    task->add_resident_bytes(pid * 2000);
  }
  v1::AgentStatus status;
  AddWorkerMemory(m, status);
  ASSERT_EQ(status.worker_memory_size(), 2);
  const v1::WorkerMemory& worker = status.worker_memory(0);
  EXPECT_EQ(worker.pid(), 10);
  EXPECT_EQ(worker.comm(), "nginx");
  EXPECT_EQ(worker.home_node(), 1);
  EXPECT_THAT(worker.resident_bytes(), ElementsAre(10'000, 20'000));
  EXPECT_EQ(status.worker_memory(1).pid(), 20);
  EXPECT_EQ(status.worker_memory(1).home_node(), -1);
  EXPECT_THAT(status.worker_memory(1).resident_bytes(),
              ElementsAre(20'000, 40'000));
}

}  // namespace
}  // namespace locus
