// One monotonic clock for every room: the interface the time-budgeted code
// takes, the real clock, and a settable one for tests. Code that only needs
// "now" once calls MonotonicNs(); code whose behaviour depends on time takes
// a Clock* so tests can drive it.
#ifndef LOCUS_COMMON_CLOCK_H_
#define LOCUS_COMMON_CLOCK_H_

#include <time.h>

#include <cstdint>

namespace locus {

// A clock_gettime(2) clock in nanoseconds.
inline uint64_t ClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

// CLOCK_MONOTONIC in nanoseconds.
inline uint64_t MonotonicNs() { return ClockNs(CLOCK_MONOTONIC); }

// CPU time the calling thread has used, in nanoseconds: with MonotonicNs()
// it tells work from waiting.
inline uint64_t ThreadCpuNs() { return ClockNs(CLOCK_THREAD_CPUTIME_ID); }

class Clock {
 public:
  virtual ~Clock() = default;
  virtual uint64_t NowNs() = 0;
};

class MonotonicClock final : public Clock {
 public:
  uint64_t NowNs() override { return MonotonicNs(); }
};

// The process-wide real clock (stateless, never destroyed).
inline Clock* RealClock() {
  static MonotonicClock* clock = new MonotonicClock();
  return clock;
}

// A clock that moves only when told to.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(uint64_t now_ns = 1'000'000'000) : now_ns_(now_ns) {}
  uint64_t NowNs() override { return now_ns_; }
  void Set(uint64_t now_ns) { now_ns_ = now_ns; }
  void Advance(uint64_t ns) { now_ns_ += ns; }

 private:
  uint64_t now_ns_;
};

}  // namespace locus

#endif  // LOCUS_COMMON_CLOCK_H_
