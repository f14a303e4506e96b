#include "agent/host/cpu_list.h"

#include <algorithm>
#include <iterator>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace locus {
namespace {

absl::StatusOr<int> ParseCpuNumber(absl::string_view text,
                                   absl::string_view whole) {
  int value = 0;
  if (text.empty() || !absl::SimpleAtoi(text, &value) || value < 0 ||
      value > kMaxCpuNumber || text.front() == '+' || text.front() == '-') {
    return absl::InvalidArgumentError(
        absl::StrCat("bad CPU number '", text, "' in CPU list '", whole, "'"));
  }
  return value;
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view text) {
  absl::string_view whole = absl::StripAsciiWhitespace(text);
  std::vector<int> cpus;
  if (whole.empty()) return cpus;
  for (absl::string_view item : absl::StrSplit(whole, ',')) {
    item = absl::StripAsciiWhitespace(item);
    int stride = 1;
    size_t colon = item.find(':');
    if (colon != absl::string_view::npos) {
      absl::string_view stride_text = item.substr(colon + 1);
      if (!absl::SimpleAtoi(stride_text, &stride) || stride <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "bad stride '", stride_text, "' in CPU list '", whole, "'"));
      }
      item = item.substr(0, colon);
    }
    size_t dash = item.find('-');
    int first = 0;
    int last = 0;
    if (dash == absl::string_view::npos) {
      absl::StatusOr<int> cpu = ParseCpuNumber(item, whole);
      if (!cpu.ok()) return cpu.status();
      first = last = *cpu;
    } else {
      absl::StatusOr<int> lo = ParseCpuNumber(item.substr(0, dash), whole);
      if (!lo.ok()) return lo.status();
      absl::StatusOr<int> hi = ParseCpuNumber(item.substr(dash + 1), whole);
      if (!hi.ok()) return hi.status();
      if (*hi < *lo) {
        return absl::InvalidArgumentError(absl::StrCat(
            "descending range '", item, "' in CPU list '", whole, "'"));
      }
      first = *lo;
      last = *hi;
    }
    for (int cpu = first; cpu <= last; cpu += stride) cpus.push_back(cpu);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus_in) {
  std::vector<int> cpus = cpus_in;
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  size_t i = 0;
  while (i < cpus.size()) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    if (j == i) {
      absl::StrAppend(&out, cpus[i]);
    } else {
      absl::StrAppend(&out, cpus[i], "-", cpus[j]);
    }
    i = j + 1;
  }
  return out;
}

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

std::vector<int> IntersectCpus(const std::vector<int>& a,
                               const std::vector<int>& b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(),
                        std::back_inserter(out));
  return out;
}

}  // namespace locus
