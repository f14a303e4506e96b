#include "agent/host/thread_workers.h"

#include <utility>

namespace locus {

void AddThreadWorkers(Target process, std::vector<Target>* targets) {
  for (ThreadSample& thread : process.threads) {
    Target& worker = targets->emplace_back();
    worker.pid = thread.tid;
    worker.process = process.pid;
    worker.comm = process.comm;
    worker.role = TargetRole::kWorker;
    worker.instance = process.instance;
    worker.page_size = process.page_size;
    worker.threads.push_back(std::move(thread));
  }
}

}  // namespace locus
