// Not a test: writes the Prometheus textfile of a busy host after TICKS
// ticks (tests/agent/realistic_metrics.h), for the tests that read it with
// real consumers (prometheus_client, the dashboard and rules check) and for
// the scrape-size figure in the README.
//   prometheus_fake_run PATH [TICKS [THREADS [IRQS [NODES]]]]
#include <cstdlib>
#include <iostream>

#include "agent/api/metrics_export.h"
#include "tests/agent/realistic_metrics.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: prometheus_fake_run PATH [TICKS [THREADS [IRQS "
                 "[NODES]]]]\n";
    return 2;
  }
  auto arg = [&](int i, int fallback) {
    return argc > i ? std::atoi(argv[i]) : fallback;
  };
  int ticks = arg(2, 10);
  locus::RealisticShape shape{
      .nodes = arg(5, 2), .threads = arg(3, 1000), .irqs = arg(4, 64)};
  locus::MetricsExportOptions options;
  options.textfile = argv[1];
  auto out =
      locus::MetricsExport::Start(options, {"0.1.0 (build test)", "6.1.0"});
  if (!out.ok()) {
    std::cerr << out.status().message() << "\n";
    return 1;
  }
  for (int t = 1; t <= ticks; ++t) {
    (*out)->Observe(locus::RealisticMetrics(t, shape),
                    locus::RealisticStatus(t, shape));
  }
  return 0;
}
