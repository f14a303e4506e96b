#include "agent/act/token_bucket.h"

#include <algorithm>

namespace locus {

TokenBucket::TokenBucket(Clock* clock, uint64_t bytes_per_sec)
    : clock_(clock),
      rate_(bytes_per_sec),
      tokens_(static_cast<double>(bytes_per_sec)),
      last_ns_(clock->NowNs()) {}

void TokenBucket::Refill() {
  const uint64_t now = clock_->NowNs();
  if (now <= last_ns_) return;
  const double seconds = static_cast<double>(now - last_ns_) / 1e9;
  last_ns_ = now;
  tokens_ = std::min(tokens_ + seconds * static_cast<double>(rate_),
                     static_cast<double>(rate_));
}

uint64_t TokenBucket::Take(uint64_t want) {
  absl::MutexLock lock(&mu_);
  Refill();
  const uint64_t granted =
      std::min<uint64_t>(want, static_cast<uint64_t>(std::max(tokens_, 0.0)));
  tokens_ -= static_cast<double>(granted);
  return granted;
}

void TokenBucket::Return(uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  tokens_ = std::min(tokens_ + static_cast<double>(bytes),
                     static_cast<double>(rate_));
}

uint64_t TokenBucket::WaitNs(uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  Refill();
  const double missing = static_cast<double>(bytes) - tokens_;
  if (missing <= 0 || rate_ == 0) return 0;
  return static_cast<uint64_t>(missing / static_cast<double>(rate_) * 1e9) + 1;
}

}  // namespace locus
