#include "agent/main/one_shot.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "agent/ctl/format.h"
#include "agent/host/tiering_report.h"
#include "agent/host/topology.h"
#include "agent/sensors/bpf_sensors.h"
#include "agent/sensors/capabilities.h"
#include "agent/sensors/libbpf_prober.h"
#include "agent/sensors/probe_report.h"
#include "agent/sensors/proc_sched.h"
#include "agent/sensors/reading_json.h"
#include "agent/sensors/source_plan.h"
#include "common/printable.h"

namespace locus {
namespace {

bool HaveCapabilities(std::ostream& err) {
  absl::StatusOr<std::vector<std::string>> missing =
      MissingSensorCapabilities();
  if (!missing.ok()) {
    err << "locusd: " << missing.status().message() << "\n";
    return false;
  }
  if (missing->empty()) return true;
  err << "locusd: missing capability " << absl::StrJoin(*missing, ", ")
      << ": the sensors load BPF programs; run as root\n";
  return false;
}

SensorOptions SensorOptionsFromHost(const OneShotOptions& o,
                                    std::ostream& err) {
  SensorOptions s = o.sensors;
  s.procfs_root = o.procfs_root;
  s.numa_balancing = ReadNumaBalancing(o.procfs_root);
  absl::StatusOr<Topology> topo = ReadTopology(o.sysfs_root);
  if (!topo.ok()) {
    // Without a topology every CPU counts as node 0: migrations still count,
    // none is cross-node, and the NUMA sensor reports a single node.
    err << "locusd: topology unreadable, assuming one node: "
        << topo.status().message() << "\n";
    return s;
  }
  s.SetTopology(*topo);
  return s;
}

// The memory tiers and the kernel's movers between them: what Locus will
// leave to the kernel on this host. A bad file is named and the rest shown.
void AddMemoryTiers(const OneShotOptions& o, v1::ProbeReport& report,
                    std::ostream& err) {
  std::vector<std::string> errors;
  absl::StatusOr<v1::MemoryTiering> tiers =
      ReadMemoryTieringReport(o.sysfs_root, o.procfs_root, &errors);
  for (const std::string& error : errors) {
    err << "locusd: memory tiers: " << Printable(error) << "\n";
  }
  if (!tiers.ok()) {
    err << "locusd: memory tiers: " << tiers.status().message() << "\n";
    return;
  }
  *report.mutable_memory_tiering() = *std::move(tiers);
}

}  // namespace

int RunProbe(const OneShotOptions& options, std::ostream& out,
             std::ostream& err) {
  if (!HaveCapabilities(err)) return 1;
  LibbpfProber prober;
  FeatureSet features(&prober, options.disabled_features);
  v1::ProbeReport report = ProbeReportOf(features, ChooseSources(features));
  AddMemoryTiers(options, report, err);
  // Printed as `locusctl probe` prints the daemon's report.
  absl::StatusOr<std::string> shown =
      ctl::TextOrJson(report, options.json, ctl::FormatProbe);
  if (!shown.ok()) {
    err << "locusd: " << shown.status().message() << "\n";
    return 1;
  }
  out << *shown;
  return 0;
}

int RunObserve(const OneShotOptions& options, std::ostream& out,
               std::ostream& err) {
  if (!HaveCapabilities(err)) return 1;
  LibbpfProber prober;
  FeatureSet features(&prober, options.disabled_features);
  absl::StatusOr<std::unique_ptr<SensorSource>> sensors =
      OpenBpfSensors(SensorOptionsFromHost(options, err), features);
  if (!sensors.ok()) {
    err << "locusd: " << sensors.status().message() << "\n";
    return 1;
  }
  double secs = std::max(0.0, options.observe_seconds);
  timespec ts{.tv_sec = static_cast<time_t>(secs),
              .tv_nsec = static_cast<long>(std::fmod(secs, 1.0) * 1e9)};
  while (nanosleep(&ts, &ts) != 0) {
  }
  absl::StatusOr<SensorReading> reading = (*sensors)->Read();
  if (!reading.ok()) {
    err << "locusd: " << reading.status().message() << "\n";
    return 1;
  }
  // The text form is the same JSON: one snapshot is too wide for a table.
  out << ReadingToJson(*reading, static_cast<uint64_t>(secs * 1e9));
  return 0;
}

}  // namespace locus
