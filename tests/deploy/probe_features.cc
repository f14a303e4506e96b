// Prints, one line per BPF feature, whether this process can use it and the
// errno that refused it: "tp_btf available 0". unit_caps.sh runs it with and
// without the systemd unit's capabilities and compares the two.
#include <iostream>

#include "agent/sensors/feature_probe.h"
#include "agent/sensors/libbpf_prober.h"

int main() {
  locus::LibbpfProber prober;
  for (int i = 0; i < locus::kNumFeatures; ++i) {
    auto f = static_cast<locus::Feature>(i);
    locus::ProbeResult r = prober.Probe(f);
    std::cout << locus::FeatureName(f) << ' '
              << (r.available ? "available" : "absent") << ' ' << r.error
              << '\n';
  }
  return 0;
}
