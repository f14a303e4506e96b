// Pieces of lab_sampler, the convergence benchmark's outside observer: it
// measures placement the same way whatever tool (or none) is moving things,
// so these are plain parsers and arithmetic over /proc text, testable here.
#ifndef LOCUS_TESTS_LAB_BENCH_SAMPLER_H_
#define LOCUS_TESTS_LAB_BENCH_SAMPLER_H_

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace locus {

// Per-CPU counts of one softirq vector (e.g. "NET_RX") in /proc/softirqs,
// in the order of its CPU columns.
absl::StatusOr<std::vector<uint64_t>> ParseSoftirqCounts(
    absl::string_view text, absl::string_view vector);

// The value of `key` in /proc/vmstat; NOT_FOUND when the kernel lacks it.
absl::StatusOr<uint64_t> ParseVmstat(absl::string_view text,
                                     absl::string_view key);

// Comma-separated non-negative ids ("12,13"; "" is none).
absl::StatusOr<std::vector<int>> ParseIds(absl::string_view text);

// The node most of `nodes` are on (ties: the lowest); -1 when none is >= 0.
int MajorityNode(const std::vector<int>& nodes);

// Cumulative (local, total) counters over time, and their increase over a
// trailing window: a share per window rather than per sample, because one
// sample period holds too few softirqs to be a stable share.
class WindowCounts {
 public:
  void Add(uint64_t t_ns, uint64_t local, uint64_t total);
  // Increase from the oldest sample at most `window_ns` before the newest
  // (the first sample when none is that old), to the newest.
  std::pair<uint64_t, uint64_t> Over(uint64_t window_ns) const;

 private:
  struct Point {
    uint64_t t_ns, local, total;
  };
  std::deque<Point> points_;
};

}  // namespace locus

#endif  // LOCUS_TESTS_LAB_BENCH_SAMPLER_H_
