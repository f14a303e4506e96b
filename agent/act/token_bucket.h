// A byte-rate token bucket shared by every page mover thread: the policy's
// MiB/s budget holds for all of them together, not per thread.
#ifndef LOCUS_AGENT_ACT_TOKEN_BUCKET_H_
#define LOCUS_AGENT_ACT_TOKEN_BUCKET_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"

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
  // Nanoseconds until `bytes` could be granted (0: now).
  uint64_t WaitNs(uint64_t bytes);
  uint64_t rate() const { return rate_; }

 private:
  void Refill() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock* clock_;
  const uint64_t rate_;
  absl::Mutex mu_;
  double tokens_ ABSL_GUARDED_BY(mu_);
  uint64_t last_ns_ ABSL_GUARDED_BY(mu_);
};

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_TOKEN_BUCKET_H_
