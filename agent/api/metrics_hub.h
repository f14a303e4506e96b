// Fan-out of the per-tick Metrics to any number of subscribers. The control
// loop publishes one message per tick; each subscriber drains its own bounded
// queue. A subscriber that falls behind loses its oldest queued messages: the
// publisher never waits for a subscriber, and the loss is reported in-band
// (Metrics.drops) in the next message that subscriber receives.
#ifndef LOCUS_AGENT_API_METRICS_HUB_H_
#define LOCUS_AGENT_API_METRICS_HUB_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "locus/v1/agent.pb.h"

namespace locus {

class MetricsHub;

// One subscriber's view of the stream. Thread-safe; normally one reader.
class MetricsSubscription {
 public:
  ~MetricsSubscription();  // unsubscribes
  MetricsSubscription(const MetricsSubscription&) = delete;
  MetricsSubscription& operator=(const MetricsSubscription&) = delete;

  // Waits up to `timeout` for the next message. Returns nullopt on timeout or
  // once the hub is closed and the queue drained (see closed()). The message
  // is this subscriber's own copy, with drops.subscriber_dropped{,_total}
  // set.
  std::optional<v1::Metrics> Next(absl::Duration timeout);

  // True once the hub has closed and every queued message was taken.
  bool closed() const;
  uint64_t dropped_total() const;

 private:
  friend class MetricsHub;
  MetricsSubscription(MetricsHub* hub, size_t depth);

  // Called by the hub with its lock held; never blocks.
  void Push(std::shared_ptr<const v1::Metrics> message);
  void Close();

  MetricsHub* const hub_;
  const size_t depth_;
  mutable absl::Mutex mu_;
  std::deque<std::shared_ptr<const v1::Metrics>> queue_ ABSL_GUARDED_BY(mu_);
  uint64_t dropped_total_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_reported_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

struct MetricsHubOptions {
  size_t queue_depth = 4;       // messages buffered per subscriber
  size_t max_subscribers = 32;  // more are refused (RESOURCE_EXHAUSTED)
};

class MetricsHub {
 public:
  explicit MetricsHub(MetricsHubOptions options = {});
  ~MetricsHub();  // closes
  MetricsHub(const MetricsHub&) = delete;
  MetricsHub& operator=(const MetricsHub&) = delete;

  // Hands one tick's metrics to every subscriber. Cost: one allocation plus
  // a short lock per subscriber; it never waits for a reader.
  void Publish(v1::Metrics metrics);

  // RESOURCE_EXHAUSTED beyond max_subscribers, UNAVAILABLE once closed.
  absl::StatusOr<std::unique_ptr<MetricsSubscription>> Subscribe();

  // Wakes every subscriber; they drain what is queued, then report closed.
  void Close();

  size_t subscriber_count() const;
  uint64_t published() const;

 private:
  friend class MetricsSubscription;
  void Remove(MetricsSubscription* subscription);

  const MetricsHubOptions options_;
  mutable absl::Mutex mu_;
  std::vector<MetricsSubscription*> subscribers_ ABSL_GUARDED_BY(mu_);
  uint64_t published_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace locus

#endif  // LOCUS_AGENT_API_METRICS_HUB_H_
