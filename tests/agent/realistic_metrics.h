// A busy host's ticks as the control loop publishes them, for the
// Prometheus exporter's tests and its scrape-size figure: `nodes` NUMA
// nodes of 8 CPUs, `threads` nginx threads (10 per process), `irqs` NIC
// IRQs firing on every CPU, pins and page moves every tick, a revert, an
// external change, a sensor that falls back to another source and a
// rejected policy reload along the way, and an A/B experiment running from
// tick 3.
#ifndef LOCUS_TESTS_AGENT_REALISTIC_METRICS_H_
#define LOCUS_TESTS_AGENT_REALISTIC_METRICS_H_

#include <cstdint>

#include "locus/v1/agent.pb.h"

namespace locus {

struct RealisticShape {
  int nodes = 2;
  int threads = 1000;
  int irqs = 64;
};

// Tick `tick` (from 1) of that host, and the status the daemon would give
// with it.
v1::Metrics RealisticMetrics(uint64_t tick, const RealisticShape& shape);
v1::AgentStatus RealisticStatus(uint64_t tick, const RealisticShape& shape);

}  // namespace locus

#endif  // LOCUS_TESTS_AGENT_REALISTIC_METRICS_H_
