#include "agent/api/metrics_hub.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace locus {

MetricsSubscription::MetricsSubscription(MetricsHub* hub, size_t depth,
                                         SubscriberInfo info)
    : hub_(hub), depth_(std::max<size_t>(depth, 1)), info_(std::move(info)) {}

MetricsSubscription::~MetricsSubscription() { hub_->Remove(this); }

uint64_t MetricsSubscription::Push(std::shared_ptr<const v1::Metrics> message) {
  absl::MutexLock lock(&mu_);
  if (closed_) return 0;
  // Drop the oldest: a slow reader should see the freshest state, and every
  // gap in its tick numbers is accounted for by the drop counters.
  while (queue_.size() >= depth_) {
    queue_.pop_front();
    ++dropped_total_;
  }
  queue_.push_back(std::move(message));
  return ++since_take_;
}

void MetricsSubscription::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
}

void MetricsSubscription::Drop(absl::Status reason) {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  dropped_total_ += queue_.size();
  queue_.clear();
  dropped_reason_ = std::move(reason);
}

uint64_t MetricsSubscription::stalled_for() const {
  absl::MutexLock lock(&mu_);
  return since_take_;
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
    // A reader that already lost messages is behind: what is still queued
    // is older than what it can have now, so it goes too, counted.
    if (dropped_total_ != dropped_reported_) {
      dropped_total_ += queue_.size() - 1;
      queue_.erase(queue_.begin(), queue_.end() - 1);
    }
    message = std::move(queue_.front());
    queue_.pop_front();
    since_take_ = 0;
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

absl::Status MetricsSubscription::dropped_reason() const {
  absl::MutexLock lock(&mu_);
  return dropped_reason_;
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
  std::vector<MetricsSubscription*> stalled;
  for (MetricsSubscription* s : subscribers_) {
    uint64_t since_take = s->Push(shared);
    if (options_.stall_ticks != 0 && since_take >= options_.stall_ticks) {
      stalled.push_back(s);
    }
  }
  for (MetricsSubscription* s : stalled) {
    DropLocked(s, absl::ResourceExhaustedError(
                      absl::StrCat("read nothing for ", options_.stall_ticks,
                                   " ticks: stream ended to free its slot")));
  }
}

absl::Status MetricsHub::CheckSlot(const SubscriberInfo& info) {
  size_t same_peer = 0;
  size_t unprivileged = 0;
  for (const MetricsSubscription* s : subscribers_) {
    if (!info.peer.empty() && s->info_.peer == info.peer) ++same_peer;
    if (!s->info_.privileged) ++unprivileged;
  }
  if (!info.root && !info.peer.empty() && same_peer >= options_.max_per_peer) {
    return absl::ResourceExhaustedError(
        absl::StrCat(info.peer, " already holds ", same_peer,
                     " metrics streams (the limit per peer)"));
  }
  const size_t max = options_.max_subscribers;
  const size_t open = max - std::min(options_.privileged_reserve, max);
  if (!info.privileged && unprivileged >= open) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "all ", open, " metrics streams open to unprivileged peers are taken (",
        max - open, " more are kept for root and the socket's group)"));
  }
  if (subscribers_.size() < max) return absl::OkStatus();
  if (info.root) {
    // The longest-stalled stream that is not root's makes way.
    MetricsSubscription* victim = nullptr;
    uint64_t stalled = 0;
    for (MetricsSubscription* s : subscribers_) {
      if (s->info_.root) continue;
      uint64_t n = s->stalled_for();
      if (victim == nullptr || n > stalled) victim = s, stalled = n;
    }
    if (victim != nullptr) {
      DropLocked(victim, absl::ResourceExhaustedError(
                             "every metrics stream was taken: this one made "
                             "way for root's"));
      return absl::OkStatus();
    }
  }
  return absl::ResourceExhaustedError(
      absl::StrCat("too many metrics subscribers (limit ", max, ")"));
}

absl::StatusOr<std::unique_ptr<MetricsSubscription>> MetricsHub::Subscribe(
    SubscriberInfo info) {
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::UnavailableError("metrics stream is shutting down");
  if (absl::Status slot = CheckSlot(info); !slot.ok()) return slot;
  std::unique_ptr<MetricsSubscription> s(
      new MetricsSubscription(this, options_.queue_depth, std::move(info)));
  subscribers_.push_back(s.get());
  return s;
}

void MetricsHub::DropLocked(MetricsSubscription* subscription,
                            absl::Status reason) {
  subscription->Drop(std::move(reason));
  subscribers_.erase(
      std::remove(subscribers_.begin(), subscribers_.end(), subscription),
      subscribers_.end());
  ++dropped_subscribers_;
  // Still alive: its destructor's Remove() waits for the lock we hold.
  if (subscription->info_.on_dropped) subscription->info_.on_dropped();
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

uint64_t MetricsHub::dropped_subscribers() const {
  absl::MutexLock lock(&mu_);
  return dropped_subscribers_;
}

}  // namespace locus
