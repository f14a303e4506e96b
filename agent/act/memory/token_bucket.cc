#include "agent/act/memory/token_bucket.h"

#include <algorithm>

namespace locus {

TokenBucket::TokenBucket(Clock* clock, uint64_t bytes_per_sec)
    : clock_(clock),
      rate_(bytes_per_sec),
      bucket_(static_cast<double>(bytes_per_sec),
              static_cast<double>(bytes_per_sec), clock->NowNs()) {}

uint64_t TokenBucket::Take(uint64_t want) {
  absl::MutexLock lock(&mu_);
  const double have = std::max(bucket_.Tokens(clock_->NowNs()), 0.0);
  const uint64_t granted =
      std::min<uint64_t>(want, static_cast<uint64_t>(have));
  bucket_.Add(-static_cast<double>(granted));
  return granted;
}

void TokenBucket::Return(uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  bucket_.Add(static_cast<double>(bytes));
}

void TokenBucket::Charge(uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  bucket_.Add(-static_cast<double>(bytes));
}

uint64_t TokenBucket::WaitNs(uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  const double missing =
      static_cast<double>(bytes) - bucket_.Tokens(clock_->NowNs());
  if (missing <= 0 || rate_ == 0) return 0;
  return static_cast<uint64_t>(missing / static_cast<double>(rate_) * 1e9) + 1;
}

}  // namespace locus
