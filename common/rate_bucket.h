// A token bucket at times the caller gives: no clock and no lock, so that a
// single-threaded user (the socket relay's reset meter) pays for neither and
// a shared one (the page movers' byte budget, token_bucket.h) adds its own.
// Tokens refill at `per_second` up to `burst` and start full. They may go
// below zero (Add with a negative amount): a debt that refills repay before
// anything can be taken again.
#ifndef LOCUS_COMMON_RATE_BUCKET_H_
#define LOCUS_COMMON_RATE_BUCKET_H_

#include <algorithm>
#include <cstdint>

namespace locus {

class RateBucket {
 public:
  RateBucket(double per_second, double burst, uint64_t now_ns = 0)
      : per_second_(per_second),
        burst_(burst),
        tokens_(burst),
        last_ns_(now_ns) {}

  // The tokens at `now_ns`, refilled since the last call (time never runs
  // back: an earlier `now_ns` refills nothing).
  double Tokens(uint64_t now_ns) {
    if (now_ns > last_ns_) {
      const double seconds = static_cast<double>(now_ns - last_ns_) / 1e9;
      tokens_ = std::min(burst_, tokens_ + per_second_ * seconds);
      last_ns_ = now_ns;
    }
    return tokens_;
  }
  // Takes `n` tokens at `now_ns` if that many are there.
  bool Take(uint64_t now_ns, double n = 1) {
    if (Tokens(now_ns) < n) return false;
    tokens_ -= n;
    return true;
  }
  // Adds `n` tokens (negative: takes them, even below zero), at most up to
  // the burst.
  void Add(double n) { tokens_ = std::min(burst_, tokens_ + n); }
  double per_second() const { return per_second_; }

 private:
  double per_second_;
  double burst_;
  double tokens_;
  uint64_t last_ns_;
};

}  // namespace locus

#endif  // LOCUS_COMMON_RATE_BUCKET_H_
