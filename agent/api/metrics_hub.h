// Fan-out of the per-tick Metrics to a bounded set of subscribers. The control
// loop publishes one message per tick; each subscriber drains its own bounded
// queue. A subscriber that falls behind loses its oldest queued messages: the
// publisher never waits for a subscriber, and the loss is reported in-band
// (Metrics.drops) with the freshest message, which is the next one that
// subscriber receives. One that takes nothing for `stall_ticks` publishes
// (stopped reading, or never opens its flow-control window) is dropped so
// that it cannot keep its slot for good.
//
// Slots are shared so that no reader can lock out the administrator: the
// last `privileged_reserve` slots are for privileged peers (root or the
// socket's group), each peer (a uid, or an address over TCP) holds at most
// `max_per_peer`, and a root subscriber that finds every slot taken makes
// the longest-stalled subscriber that is not root's give way.
#ifndef LOCUS_AGENT_API_METRICS_HUB_H_
#define LOCUS_AGENT_API_METRICS_HUB_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "locus/v1/agent.pb.h"

namespace locus {

class MetricsHub;

// Who asks for a slot.
struct SubscriberInfo {
  std::string peer;         // "uid 1000", "tcp 127.0.0.1": slots are per peer
  bool privileged = false;  // may take the reserved slots
  bool root = false;        // always gets in; exempt from the per-peer cap
  // Called, with the hub's lock held, when the hub drops this subscriber
  // (stalled, or made way for root): it must only wake the reader (e.g.
  // cancel its RPC), never call back into the hub.
  std::function<void()> on_dropped;
  // For the stream's writer, not the hub: bytes already sent that the
  // client has not read (ConnectionTable::UnreadBytes); empty when unknown.
  std::function<uint64_t()> unread_bytes;
};

// One subscriber's view of the stream. Thread-safe; normally one reader.
class MetricsSubscription {
 public:
  ~MetricsSubscription();  // unsubscribes
  MetricsSubscription(const MetricsSubscription&) = delete;
  MetricsSubscription& operator=(const MetricsSubscription&) = delete;

  // Waits up to `timeout` for the next message. Returns nullopt on timeout or
  // once the hub is closed (or dropped this subscriber) and the queue is
  // drained (see closed()). The message is this subscriber's own copy, with
  // drops.subscriber_dropped{,_total} set. After a loss, the queued older
  // messages are skipped too: the reader gets the freshest state at once.
  std::optional<v1::Metrics> Next(absl::Duration timeout);

  // True once the hub has closed (or dropped this subscriber) and every
  // queued message was taken.
  bool closed() const;
  // Why the hub dropped this subscriber; OK while it was not dropped.
  absl::Status dropped_reason() const;
  uint64_t dropped_total() const;

 private:
  friend class MetricsHub;
  MetricsSubscription(MetricsHub* hub, size_t depth, SubscriberInfo info);

  // Called by the hub with its lock held; never blocks. Returns the number
  // of publishes since this subscriber last took a message.
  uint64_t Push(std::shared_ptr<const v1::Metrics> message);
  void Close();
  // Called by the hub with its lock held.
  void Drop(absl::Status reason);
  uint64_t stalled_for() const;

  MetricsHub* const hub_;
  const size_t depth_;
  const SubscriberInfo info_;
  mutable absl::Mutex mu_;
  std::deque<std::shared_ptr<const v1::Metrics>> queue_ ABSL_GUARDED_BY(mu_);
  uint64_t dropped_total_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_reported_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t since_take_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status dropped_reason_ ABSL_GUARDED_BY(mu_);
};

struct MetricsHubOptions {
  size_t queue_depth = 4;       // messages buffered per subscriber
  size_t max_subscribers = 32;  // more are refused (RESOURCE_EXHAUSTED)
  // Of those, slots only privileged peers may take.
  size_t privileged_reserve = 8;
  size_t max_per_peer = 4;  // root is exempt
  // A subscriber that took nothing for this many publishes is dropped: at
  // the default 1 s tick, a watch paused for 5 minutes. 0: never.
  uint64_t stall_ticks = 300;
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

  // RESOURCE_EXHAUSTED when no slot is left for this peer (see the file's
  // comment), UNAVAILABLE once closed.
  absl::StatusOr<std::unique_ptr<MetricsSubscription>> Subscribe(
      SubscriberInfo info = {});

  // Wakes every subscriber; they drain what is queued, then report closed.
  void Close();

  size_t subscriber_count() const;
  uint64_t published() const;
  // Subscribers dropped for stalling or to make way for root, since start.
  uint64_t dropped_subscribers() const;

 private:
  friend class MetricsSubscription;
  void Remove(MetricsSubscription* subscription);
  absl::Status CheckSlot(const SubscriberInfo& info)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropLocked(MetricsSubscription* subscription, absl::Status reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const MetricsHubOptions options_;
  mutable absl::Mutex mu_;
  std::vector<MetricsSubscription*> subscribers_ ABSL_GUARDED_BY(mu_);
  uint64_t published_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_subscribers_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace locus

#endif  // LOCUS_AGENT_API_METRICS_HUB_H_
