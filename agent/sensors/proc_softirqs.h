// /proc/softirqs: the kernel's own count of softirqs per CPU and vector
// (kernel/softirq.c, kstat_softirqs_cpu), exact whether or not the softirq
// hooks are attached. With the hooks attached only in windows, the counts
// come from here and the hooks time a sample of the events.
#ifndef LOCUS_AGENT_SENSORS_PROC_SOFTIRQS_H_
#define LOCUS_AGENT_SENSORS_PROC_SOFTIRQS_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/sensors/sensor_reading.h"

namespace locus {

using SoftirqCounts = std::array<uint64_t, kNumSoftirqVectors>;

// Counts indexed by CPU id (the header's "CPUn" columns; a CPU the header
// skips reads zeros) and by vector (include/linux/interrupt.h order, by
// name: a name this build does not know is skipped). Errors name the line.
absl::StatusOr<std::vector<SoftirqCounts>> ParseProcSoftirqs(
    absl::string_view text);

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_PROC_SOFTIRQS_H_
