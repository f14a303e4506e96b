// The BPF-backed SensorSource: the sched, numa and softirq sensors
// (sched_sensor.h, numa_sensor.h, softirq_sensor.h) opened with the sources
// ChooseSources() picked, and read in turn into one SensorReading.
#ifndef LOCUS_AGENT_SENSORS_BPF_SENSORS_H_
#define LOCUS_AGENT_SENSORS_BPF_SENSORS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "agent/sensors/feature_probe.h"
#include "agent/sensors/sensor_source.h"
#include "agent/sensors/source_plan.h"

namespace locus {

// Loads and attaches every sensor. Fails when a chosen source does not load
// (the error names the program and errno); a sensor whose plan says "none"
// is simply absent from the readings.
absl::StatusOr<std::unique_ptr<SensorSource>> OpenBpfSensors(
    const SensorOptions& options, const SourcePlan& plan);

// Convenience: ChooseSources(features) then OpenBpfSensors.
absl::StatusOr<std::unique_ptr<SensorSource>> OpenBpfSensors(
    const SensorOptions& options, FeatureSet& features);

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_BPF_SENSORS_H_
