#include "tests/lab/bench/sampler.h"

#include <map>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace locus {

absl::StatusOr<std::vector<uint64_t>> ParseSoftirqCounts(
    absl::string_view text, absl::string_view vector) {
  const std::string label = absl::StrCat(vector, ":");
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.empty() || fields[0] != label) continue;
    std::vector<uint64_t> counts;
    for (size_t i = 1; i < fields.size(); ++i) {
      uint64_t value = 0;
      if (!absl::SimpleAtoi(fields[i], &value)) {
        return absl::InvalidArgumentError(
            absl::StrCat("softirqs: bad count '", fields[i], "' for ", label));
      }
      counts.push_back(value);
    }
    return counts;
  }
  return absl::NotFoundError(absl::StrCat("softirqs: no ", label, " line"));
}

absl::StatusOr<uint64_t> ParseVmstat(absl::string_view text,
                                     absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, key) || !absl::ConsumePrefix(&rest, " ")) {
      continue;
    }
    uint64_t value = 0;
    if (!absl::SimpleAtoi(rest, &value)) {
      return absl::InvalidArgumentError(absl::StrCat("vmstat: bad ", line));
    }
    return value;
  }
  return absl::NotFoundError(absl::StrCat("vmstat: no ", key));
}

absl::StatusOr<std::vector<int>> ParseIds(absl::string_view text) {
  std::vector<int> ids;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int id = 0;
    if (!absl::SimpleAtoi(part, &id) || id < 0) {
      return absl::InvalidArgumentError(absl::StrCat("bad id '", part, "'"));
    }
    ids.push_back(id);
  }
  return ids;
}

int MajorityNode(const std::vector<int>& nodes) {
  std::map<int, int> votes;
  for (int n : nodes) {
    if (n >= 0) ++votes[n];
  }
  int best = -1, best_votes = 0;
  for (const auto& [node, count] : votes) {
    if (count > best_votes) best = node, best_votes = count;
  }
  return best;
}

void WindowCounts::Add(uint64_t t_ns, uint64_t local, uint64_t total) {
  points_.push_back({t_ns, local, total});
}

std::pair<uint64_t, uint64_t> WindowCounts::Over(uint64_t window_ns) const {
  if (points_.empty()) return {0, 0};
  const Point& last = points_.back();
  const Point* first = &points_.front();
  for (const Point& p : points_) {
    if (last.t_ns - p.t_ns <= window_ns) {
      first = &p;
      break;
    }
  }
  return {last.local - first->local, last.total - first->total};
}

}  // namespace locus
