// A byte-rate token bucket shared by every page mover thread: the policy's
// MiB/s budget holds for all of them together, not per thread. A RateBucket
// (common/rate_bucket.h) under a lock, on the mover's clock.
#ifndef LOCUS_AGENT_ACT_MEMORY_TOKEN_BUCKET_H_
#define LOCUS_AGENT_ACT_MEMORY_TOKEN_BUCKET_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/rate_bucket.h"

namespace locus {

class TokenBucket {
 public:
  // Refills at `bytes_per_sec` up to a burst of one second's worth, and
  // starts full. `clock` is borrowed.
  TokenBucket(Clock* clock, uint64_t bytes_per_sec);

  // Takes up to `want` bytes; returns how many were granted (maybe 0).
  uint64_t Take(uint64_t want);
  // Gives back what a grant did not use.
  void Return(uint64_t bytes);
  // Charges bytes moved beyond a grant (a huge page goes whole when any of
  // a grant is left), even below zero: later refills repay them before
  // anything is granted again.
  void Charge(uint64_t bytes);
  // Nanoseconds until `bytes` could be granted (0: now).
  uint64_t WaitNs(uint64_t bytes);
  uint64_t rate() const { return rate_; }

 private:
  Clock* clock_;
  const uint64_t rate_;
  absl::Mutex mu_;
  RateBucket bucket_ ABSL_GUARDED_BY(mu_);
};

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_MEMORY_TOKEN_BUCKET_H_
