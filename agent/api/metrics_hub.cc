#include "agent/api/metrics_hub.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace locus {

MetricsSubscription::MetricsSubscription(MetricsHub* hub, size_t depth)
    : hub_(hub), depth_(std::max<size_t>(depth, 1)) {}

MetricsSubscription::~MetricsSubscription() { hub_->Remove(this); }

void MetricsSubscription::Push(std::shared_ptr<const v1::Metrics> message) {
  absl::MutexLock lock(&mu_);
  if (closed_) return;
  // Drop the oldest: a slow reader should see the freshest state, and every
  // gap in its tick numbers is accounted for by the drop counters.
  while (queue_.size() >= depth_) {
    queue_.pop_front();
    ++dropped_total_;
  }
  queue_.push_back(std::move(message));
}

void MetricsSubscription::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
}

std::optional<v1::Metrics> MetricsSubscription::Next(absl::Duration timeout) {
  std::shared_ptr<const v1::Metrics> message;
  uint64_t dropped = 0;
  uint64_t dropped_total = 0;
  {
    absl::MutexLock lock(&mu_);
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !queue_.empty() || closed_;
    };
    mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
    if (queue_.empty()) return std::nullopt;
    message = std::move(queue_.front());
    queue_.pop_front();
    dropped_total = dropped_total_;
    dropped = dropped_total_ - dropped_reported_;
    dropped_reported_ = dropped_total_;
  }
  // The copy is made on the reader's thread, never the publisher's.
  v1::Metrics out = *message;
  out.mutable_drops()->set_subscriber_dropped(dropped);
  out.mutable_drops()->set_subscriber_dropped_total(dropped_total);
  return out;
}

bool MetricsSubscription::closed() const {
  absl::MutexLock lock(&mu_);
  return closed_ && queue_.empty();
}

uint64_t MetricsSubscription::dropped_total() const {
  absl::MutexLock lock(&mu_);
  return dropped_total_;
}

MetricsHub::MetricsHub(MetricsHubOptions options) : options_(options) {}

MetricsHub::~MetricsHub() { Close(); }

void MetricsHub::Publish(v1::Metrics metrics) {
  auto shared = std::make_shared<const v1::Metrics>(std::move(metrics));
  absl::MutexLock lock(&mu_);
  if (closed_) return;
  ++published_;
  for (MetricsSubscription* s : subscribers_) s->Push(shared);
}

absl::StatusOr<std::unique_ptr<MetricsSubscription>> MetricsHub::Subscribe() {
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::UnavailableError("metrics stream is shutting down");
  if (subscribers_.size() >= options_.max_subscribers) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "too many metrics subscribers (limit ", options_.max_subscribers, ")"));
  }
  std::unique_ptr<MetricsSubscription> s(
      new MetricsSubscription(this, options_.queue_depth));
  subscribers_.push_back(s.get());
  return s;
}

void MetricsHub::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  for (MetricsSubscription* s : subscribers_) s->Close();
}

void MetricsHub::Remove(MetricsSubscription* subscription) {
  absl::MutexLock lock(&mu_);
  subscribers_.erase(
      std::remove(subscribers_.begin(), subscribers_.end(), subscription),
      subscribers_.end());
}

size_t MetricsHub::subscriber_count() const {
  absl::MutexLock lock(&mu_);
  return subscribers_.size();
}

uint64_t MetricsHub::published() const {
  absl::MutexLock lock(&mu_);
  return published_;
}

}  // namespace locus
