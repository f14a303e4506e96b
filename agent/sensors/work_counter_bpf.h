// The factory of the work sensor (work_counter.h) that prefers the BPF
// counter, bpf/work.bpf.c. Its own library (locus_sensors_work_bpf), so that
// only it links libbpf and the skeleton. Needs CAP_BPF and CAP_PERFMON (or
// CAP_SYS_ADMIN).
#ifndef LOCUS_AGENT_SENSORS_WORK_COUNTER_BPF_H_
#define LOCUS_AGENT_SENSORS_WORK_COUNTER_BPF_H_

#include <memory>

#include "agent/sensors/work_counter.h"

namespace locus {

// The BPF counter when its program loads and attaches here (checked once,
// now, and undone at once: it is loaded and attached for real at the first
// non-empty Watch and detached at Stop), else the procfs fallback, whose
// source() then says why (options.disable_bpf included).
std::unique_ptr<WorkCounter> MakeWorkCounter(const WorkCounterOptions& options);

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_WORK_COUNTER_BPF_H_
