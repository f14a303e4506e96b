// The log lines for processes the scan refused as targets. Anyone can start
// look-alikes of nginx, as many as they like, with paths as long as they
// like: each kind of refusal gets at most `burst` lines per interval, then
// one line with how many more there were, and a refusal's message quotes
// at most a bounded part of its reason (RefusalMessage).
#ifndef LOCUS_AGENT_CORE_REFUSAL_LOG_H_
#define LOCUS_AGENT_CORE_REFUSAL_LOG_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/log_limiter.h"
#include "policy/snapshot.h"

namespace locus {

// The kind of a refusal, from its reason (agent/host/target_trust.cc's
// words): "executable not owned by root", "executable writable by others",
// "executable unreadable", "master not started by root", or "other". A
// handful whatever reasons processes bring about, so that the lines per
// interval stay bounded even when a path mimics another kind's words.
absl::string_view RefusalKind(absl::string_view reason);

class RefusalLog {
 public:
  static constexpr size_t kBurst = 5;
  static constexpr uint64_t kIntervalNs = 60'000'000'000ull;

  explicit RefusalLog(size_t burst = kBurst, uint64_t interval_ns = kIntervalNs)
      : limiter_(burst, interval_ns) {}

  // Logs `fresh` (refused since the last scan: ExplainHistory::
  // RememberRefused) within the caps, then a summary for each kind whose
  // interval is over with lines held back. Call every tick, even with
  // nothing fresh, so that summaries come on time.
  void Report(const std::vector<RefusedProcess>& fresh, uint64_t now_ns);

 private:
  LogLimiter limiter_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_CORE_REFUSAL_LOG_H_
