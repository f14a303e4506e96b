// SensorReading as JSON (`locusd --observe --json`).
#ifndef LOCUS_AGENT_SENSORS_READING_JSON_H_
#define LOCUS_AGENT_SENSORS_READING_JSON_H_

#include <string>

#include "agent/sensors/sensor_reading.h"

namespace locus {

// One JSON object: window, sources, numa status, tasks, cpus, irqs, drops.
// `window_ns` is the observation length; counters are as read (cumulative
// since the sensors were opened, which for --observe is the window).
std::string ReadingToJson(const SensorReading& r, uint64_t window_ns);

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_READING_JSON_H_
