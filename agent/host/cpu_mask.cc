#include "agent/host/cpu_mask.h"

#include <algorithm>
#include <iterator>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace locus {

absl::StatusOr<std::vector<int>> ParseCpuMask(absl::string_view text) {
  absl::string_view whole = absl::StripAsciiWhitespace(text);
  if (whole.empty()) {
    return absl::InvalidArgumentError("empty CPU mask");
  }
  std::vector<absl::string_view> words = absl::StrSplit(whole, ',');
  if (words.size() * 32 > static_cast<size_t>(kMaxCpuNumber) + 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("CPU mask too long: '", whole, "'"));
  }
  std::vector<int> cpus;
  // The last word holds CPUs 0-31.
  for (size_t w = 0; w < words.size(); ++w) {
    absl::string_view word = words[words.size() - 1 - w];
    if (word.empty() || word.size() > 8) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad CPU mask word '", word, "' in '", whole, "'"));
    }
    uint32_t bits = 0;
    for (char c : word) {
      int digit;
      if (c >= '0' && c <= '9') {
        digit = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        digit = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        digit = c - 'A' + 10;
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("bad CPU mask word '", word, "' in '", whole, "'"));
      }
      bits = (bits << 4) | static_cast<uint32_t>(digit);
    }
    for (int bit = 0; bit < 32; ++bit) {
      if (bits & (1u << bit)) cpus.push_back(static_cast<int>(w * 32) + bit);
    }
  }
  return cpus;
}

std::vector<int> SortedCpus(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::vector<int> IntersectCpus(const std::vector<int>& a,
                               const std::vector<int>& b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(),
                        std::back_inserter(out));
  return out;
}

}  // namespace locus
