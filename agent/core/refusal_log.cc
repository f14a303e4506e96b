#include "agent/core/refusal_log.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "agent/core/event_log.h"
#include "agent/core/explain_history.h"
#include "common/log.h"

namespace locus {

absl::string_view RefusalKind(absl::string_view reason) {
  struct Words {
    absl::string_view words;
    absl::string_view kind;
  };
  static constexpr Words kKinds[] = {
      {" is owned by uid ", "executable not owned by root"},
      {" may be written by group or others", "executable writable by others"},
      {"its executable (", "executable unreadable"},
      {" was started by uid ", "master not started by root"},
  };
  // The first problem named is the reason; later words may come from a
  // path or a unit name.
  absl::string_view kind = "other";
  size_t first = absl::string_view::npos;
  for (const Words& k : kKinds) {
    const size_t at = reason.find(k.words);
    if (at < first) {
      first = at;
      kind = k.kind;
    }
  }
  return kind;
}

void RefusalLog::Report(const std::vector<RefusedProcess>& fresh,
                        uint64_t now_ns) {
  for (const RefusedProcess& process : fresh) {
    if (limiter_.Allow(RefusalKind(process.reason), now_ns)) {
      Log(RefusalEntry(process, RefusalMessage(process)));
    }
  }
  for (const LogLimiter::Suppressed& s : limiter_.TakeSuppressed(now_ns)) {
    const uint64_t seconds = (now_ns - s.since_ns) / 1'000'000'000ull;
    Log(RefusalSummaryEntry(
        s.key, s.count,
        absl::StrCat(s.count, " more processes refused as targets (", s.key,
                     ") in the last ", seconds,
                     " s, not logged one by one; `locusctl explain <pid>` "
                     "says why for each")));
  }
}

}  // namespace locus
