// A SensorSource that returns readings queued by a test, in order; the last
// one repeats. Read() fails with the queued status when one is queued.
#ifndef LOCUS_AGENT_SENSORS_FAKE_SENSOR_SOURCE_H_
#define LOCUS_AGENT_SENSORS_FAKE_SENSOR_SOURCE_H_

#include <deque>
#include <utility>

#include "absl/status/status.h"
#include "agent/sensors/sensor_source.h"

namespace locus {

class FakeSensorSource : public SensorSource {
 public:
  void Push(SensorReading r) { queue_.push_back(std::move(r)); }
  void Push(absl::Status error) { queue_.push_back(std::move(error)); }

  absl::StatusOr<SensorReading> Read() override {
    ++reads_;
    if (queue_.empty()) return absl::UnavailableError("no reading queued");
    absl::StatusOr<SensorReading> r = queue_.front();
    if (queue_.size() > 1) queue_.pop_front();
    return r;
  }
  SensorSources sources() const override {
    if (!queue_.empty() && queue_.front().ok()) return queue_.front()->sources;
    return {};
  }
  int reads() const { return reads_; }

 private:
  std::deque<absl::StatusOr<SensorReading>> queue_;
  int reads_ = 0;
};

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_FAKE_SENSOR_SOURCE_H_
