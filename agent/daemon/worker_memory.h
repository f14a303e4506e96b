// Each worker process's memory per node for AgentStatus, from one tick's
// Metrics: the status shows it, and the Prometheus exporter sums it by home
// node from that status.
#ifndef LOCUS_AGENT_DAEMON_WORKER_MEMORY_H_
#define LOCUS_AGENT_DAEMON_WORKER_MEMORY_H_

#include "locus/v1/agent.pb.h"

namespace locus {

// One WorkerMemory per worker process, in the order of its first thread
// (its threads carry the same figures); masters and helpers are left out.
// A process of thread workers has no one home (its threads have theirs):
// home_node -1.
void AddWorkerMemory(const v1::Metrics& metrics, v1::AgentStatus& status);

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_WORKER_MEMORY_H_
