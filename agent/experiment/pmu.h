// Whether this host lets the agent count CPU cycles, instructions and cache
// misses per thread (a PMU reachable through perf_event_open): guests and
// containers often do not, and the experiment's report says so.
#ifndef LOCUS_AGENT_EXPERIMENT_PMU_H_
#define LOCUS_AGENT_EXPERIMENT_PMU_H_

#include <string>

namespace locus {

// "none (perf_event_open cycles: No such file or directory)" or what is
// available.
std::string PmuAvailability();

}  // namespace locus

#endif  // LOCUS_AGENT_EXPERIMENT_PMU_H_
