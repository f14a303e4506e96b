// SensorReading and the probe report as JSON (`locusd --observe --json`,
// `locusd --probe --json`) and as text.
#ifndef LOCUS_AGENT_SENSORS_READING_JSON_H_
#define LOCUS_AGENT_SENSORS_READING_JSON_H_

#include <string>

#include "agent/sensors/feature_probe.h"
#include "agent/sensors/sensor_reading.h"
#include "agent/sensors/source_plan.h"

namespace locus {

// One JSON object: window, sources, numa status, tasks, cpus, irqs, drops.
// `window_ns` is the observation length; counters are as read (cumulative
// since the sensors were opened, which for --observe is the window).
std::string ReadingToJson(const SensorReading& r, uint64_t window_ns);

// Every feature with its probe outcome, then each sensor's chosen source and
// the reasons better ones were rejected.
std::string ProbeReportJson(FeatureSet& features, const SourcePlan& plan);
std::string ProbeReportText(FeatureSet& features, const SourcePlan& plan);

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_READING_JSON_H_
