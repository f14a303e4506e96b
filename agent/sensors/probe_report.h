// What the probe found, as the wire type both `locusd --probe` and the
// agent's Probe RPC return: every feature and every sensor's chosen source.
#ifndef LOCUS_AGENT_SENSORS_PROBE_REPORT_H_
#define LOCUS_AGENT_SENSORS_PROBE_REPORT_H_

#include "agent/sensors/feature_probe.h"
#include "agent/sensors/source_plan.h"
#include "locus/v1/agent.pb.h"

namespace locus {

v1::ProbeReport ProbeReportOf(FeatureSet& features, const SourcePlan& plan);

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_PROBE_REPORT_H_
