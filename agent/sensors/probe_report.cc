#include "agent/sensors/probe_report.h"

#include <sys/utsname.h>

#include <string>

#include "absl/strings/str_join.h"

namespace locus {

v1::ProbeReport ProbeReportOf(FeatureSet& features, const SourcePlan& plan) {
  v1::ProbeReport report;
  utsname host;
  if (uname(&host) == 0) report.set_kernel(host.release);
  for (int i = 0; i < kNumFeatures; ++i) {
    Feature f = static_cast<Feature>(i);
    const ProbeResult& r = features.Get(f);
    v1::ProbeFeature* out = report.add_features();
    out->set_name(std::string(FeatureName(f)));
    out->set_available(r.available);
    out->set_forced_off(r.forced_off);
    out->set_detail(features.Explain(f));
  }
  for (const SensorChoice& choice : plan.choices) {
    v1::SensorSource* out = report.add_sensors();
    out->set_sensor(choice.sensor);
    out->set_source(choice.source);
    out->set_ok(choice.source != "none");
    out->set_detail(absl::StrJoin(choice.rejected, "; "));
  }
  return report;
}

}  // namespace locus
