#include "policy/cpu_list.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"

namespace locus {
namespace {

absl::StatusOr<int> ParseCpu(absl::string_view text) {
  int cpu = 0;
  // SimpleAtoi accepts surrounding blanks and a sign; the kernel does not.
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) {
        return c >= '0' && c <= '9';
      })) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text, "\" is not a CPU number"));
  }
  if (!absl::SimpleAtoi(text, &cpu) || cpu >= kMaxCpuNumber) {
    return absl::InvalidArgumentError(
        absl::StrCat("CPU ", text, " is out of range (CPUs are numbered below ",
                     kMaxCpuNumber, ")"));
  }
  return cpu;
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view text) {
  std::vector<int> cpus;
  // Files in /sys and /proc end in a newline; a memory-only node's is empty.
  text = absl::StripAsciiWhitespace(text);
  if (text.empty()) return cpus;
  std::vector<bool> seen(kMaxCpuNumber, false);
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    std::pair<absl::string_view, absl::string_view> range =
        absl::StrSplit(part, absl::MaxSplits('-', 1));
    ASSIGN_OR_RETURN(const int first, ParseCpu(range.first));
    int last = first;
    if (part.find('-') != absl::string_view::npos) {
      ASSIGN_OR_RETURN(last, ParseCpu(range.second));
      if (last < first) {
        return absl::InvalidArgumentError(
            absl::StrCat("range ", part, " is reversed"));
      }
    }
    for (int cpu = first; cpu <= last; ++cpu) {
      if (seen[cpu]) {
        return absl::InvalidArgumentError(
            absl::StrCat("CPU ", cpu, " is listed twice"));
      }
      seen[cpu] = true;
      cpus.push_back(cpu);
    }
  }
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

std::string FormatCpuList(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  size_t i = 0;
  while (i < cpus.size()) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    absl::StrAppend(&out, cpus[i]);
    if (j > i) absl::StrAppend(&out, "-", cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace locus
