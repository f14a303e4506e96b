// Servers whose workers are threads (HAProxy's nbthread): each thread of
// such a worker process is a target of its own (Target::process), placed as
// a worker process is. Their pages are the process's, shared by all of
// them: no thread has pages of its own to weigh or move, and none are read.
#ifndef LOCUS_AGENT_HOST_THREAD_WORKERS_H_
#define LOCUS_AGENT_HOST_THREAD_WORKERS_H_

#include <vector>

#include "policy/snapshot.h"

namespace locus {

// Appends one worker target per thread of `process` (a worker process
// whose threads were read), each with that thread alone.
void AddThreadWorkers(Target process, std::vector<Target>* targets);

}  // namespace locus

#endif  // LOCUS_AGENT_HOST_THREAD_WORKERS_H_
