// libbpf's own messages (why an object failed to open or load, the
// verifier's log) through the project's logger, so that under systemd they
// carry a priority like every other line instead of going to bare stderr.
#ifndef LOCUS_AGENT_SENSORS_LIBBPF_LOG_H_
#define LOCUS_AGENT_SENSORS_LIBBPF_LOG_H_

namespace locus {

// The verbosity (common/log.h) from which libbpf's debug messages show.
inline constexpr int kLibbpfDebugVerbosity = 2;

// Installs the printer on the first call in the process; later calls do
// nothing. Called before anything that can make libbpf print.
void RouteLibbpfLogs();

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_LIBBPF_LOG_H_
