// The real KernelProber: loads (and where it matters attaches) a minimal
// program of each kind, the way libbpf-tools' probe_tp_btf/fentry_can_attach
// do, so the answer is what this kernel allows, not what its version implies.
#ifndef LOCUS_AGENT_SENSORS_LIBBPF_PROBER_H_
#define LOCUS_AGENT_SENSORS_LIBBPF_PROBER_H_

#include "agent/sensors/feature_probe.h"

namespace locus {

class LibbpfProber : public KernelProber {
 public:
  ProbeResult Probe(Feature f) override;
};

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_LIBBPF_PROBER_H_
