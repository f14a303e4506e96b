#include "agent/sensors/proc_softirqs.h"

#include <algorithm>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace locus {
namespace {

// softirq_to_name[] in kernel/softirq.c, in vector order.
constexpr absl::string_view kVectorNames[kNumSoftirqVectors] = {
    "HI",       "TIMER",   "NET_TX", "NET_RX",  "BLOCK",
    "IRQ_POLL", "TASKLET", "SCHED",  "HRTIMER", "RCU"};

// The kernel prints at most this many CPUs (NR_CPUS on Debian's kernels).
constexpr int kMaxCpuId = 8191;

}  // namespace

absl::StatusOr<std::vector<SoftirqCounts>> ParseProcSoftirqs(
    absl::string_view text) {
  std::vector<absl::string_view> lines =
      absl::StrSplit(text, '\n', absl::SkipWhitespace());
  if (lines.empty()) return absl::DataLossError("empty (truncated?)");
  std::vector<int> cpus;
  for (absl::string_view col :
       absl::StrSplit(lines[0], ' ', absl::SkipEmpty())) {
    int cpu = -1;
    if (!absl::ConsumePrefix(&col, "CPU") || !absl::SimpleAtoi(col, &cpu) ||
        cpu < 0 || cpu > kMaxCpuId) {
      return absl::InvalidArgumentError(
          absl::StrCat("line 1: '", col, "' is not a CPU column"));
    }
    cpus.push_back(cpu);
  }
  if (cpus.empty()) return absl::InvalidArgumentError("line 1: no CPU column");
  std::vector<SoftirqCounts> out(*std::max_element(cpus.begin(), cpus.end()) +
                                 1);
  for (auto& c : out) c.fill(0);
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<absl::string_view> f =
        absl::StrSplit(lines[i], ' ', absl::SkipEmpty());
    absl::string_view name = f[0];
    if (!absl::ConsumeSuffix(&name, ":")) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", i + 1, ": no 'NAME:' at its start"));
    }
    const absl::string_view* v =
        std::find(std::begin(kVectorNames), std::end(kVectorNames), name);
    if (v == std::end(kVectorNames)) continue;  // a vector newer than us
    if (f.size() != cpus.size() + 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", i + 1, " (", name, "): ", f.size() - 1,
                       " counts for ", cpus.size(), " CPUs (truncated?)"));
    }
    for (size_t k = 0; k < cpus.size(); ++k) {
      uint64_t n;
      if (!absl::SimpleAtoi(f[k + 1], &n)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "line ", i + 1, " (", name, "): bad count '", f[k + 1], "'"));
      }
      out[cpus[k]][v - std::begin(kVectorNames)] = n;
    }
  }
  return out;
}

}  // namespace locus
