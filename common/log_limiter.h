// A cap on log lines of one kind that anyone may cause: a local user who
// starts 300 short-lived look-alikes of nginx must not write 300 lines
// (1.2 MB with long paths) into root's log. Per key, the first `burst`
// entries of each interval are logged; the rest are only counted, and once
// the interval is over the caller writes one summary line per key with the
// count (TakeSuppressed). The caller keeps keys few (a fixed set of
// reasons, never a name or path from outside), so the lines per interval
// are bounded too. Times are the caller's: no clock, no lock.
#ifndef LOCUS_COMMON_LOG_LIMITER_H_
#define LOCUS_COMMON_LOG_LIMITER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace locus {

class LogLimiter {
 public:
  LogLimiter(size_t burst, uint64_t interval_ns)
      : burst_(burst), interval_ns_(interval_ns) {}

  // Whether an entry of `key` at `now_ns` is to be logged; if not, it is
  // counted for the key's summary.
  bool Allow(absl::string_view key, uint64_t now_ns) {
    auto [it, fresh] = keys_.try_emplace(std::string(key));
    Window& w = it->second;
    // A window whose held-back entries are not summed up yet stays open, so
    // that none goes uncounted.
    if (fresh || (Over(w, now_ns) && w.suppressed == 0)) {
      w = Window{now_ns, 0, 0};
    }
    if (w.logged < burst_) {
      ++w.logged;
      return true;
    }
    ++w.suppressed;
    return false;
  }

  struct Suppressed {
    std::string key;
    uint64_t count = 0;     // entries not logged
    uint64_t since_ns = 0;  // the start of their interval
  };
  // The keys whose interval is over at `now_ns` and that held entries back,
  // each with how many; their next interval starts now. Keys whose interval
  // is over with nothing held back are forgotten, so the map stays small.
  std::vector<Suppressed> TakeSuppressed(uint64_t now_ns) {
    std::vector<Suppressed> out;
    for (auto it = keys_.begin(); it != keys_.end();) {
      Window& w = it->second;
      if (!Over(w, now_ns)) {
        ++it;
      } else if (w.suppressed == 0) {
        it = keys_.erase(it);
      } else {
        out.push_back({it->first, w.suppressed, w.start_ns});
        w = Window{now_ns, 0, 0};
        ++it;
      }
    }
    return out;
  }

 private:
  struct Window {
    uint64_t start_ns = 0;
    size_t logged = 0;
    uint64_t suppressed = 0;
  };
  bool Over(const Window& w, uint64_t now_ns) const {
    return now_ns >= w.start_ns + interval_ns_;
  }

  const size_t burst_;
  const uint64_t interval_ns_;
  std::map<std::string, Window, std::less<>> keys_;
};

}  // namespace locus

#endif  // LOCUS_COMMON_LOG_LIMITER_H_
