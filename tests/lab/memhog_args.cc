#include "tests/lab/memhog_args.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"

namespace locus {

const char kMemhogUsage[] =
    "usage: lab_memhog --mb=N --touch_node=A --run_node=B [--report_ms=200]\n"
    "                  [--thp] [--wait_for=PATH] [--bind_node=C]\n"
    "                  [--hot_mb=H]\n"
    "First-touches N MiB on node A's CPUs, prints 'ready', then keeps\n"
    "reading and writing it from node B's CPUs, printing 'passes K' every\n"
    "report_ms (0: never). --thp: the memory 2 MiB-aligned and advised\n"
    "MADV_HUGEPAGE before the touch; 'anon_huge_kib K' follows 'ready'\n"
    "(AnonHugePages of the memory after the touch, from /proc/self/smaps).\n"
    "--wait_for: after the touch, prints 'touched' and waits until PATH\n"
    "exists before moving to node B (and naming itself lab_memhog).\n"
    "--bind_node: the touch's memory bound to node C (one without CPUs\n"
    "too) instead of node A. --hot_mb: the passes use the first H MiB only\n"
    "(0: none, the process then sleeps), the rest stays cold.\n";

namespace {

// Largest --mb accepted: far beyond any lab guest, small enough that
// mb << 20 cannot overflow.
constexpr uint64_t kMaxMb = 1ull << 30;

absl::Status Invalid(absl::string_view flag, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", why));
}

absl::Status ParseInt(absl::string_view flag, absl::string_view text,
                      int64_t min, int64_t max, int64_t* out) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) {
    return Invalid(flag, absl::StrCat("not an integer: '", text, "'"));
  }
  if (value < min || value > max) {
    return Invalid(flag,
                   absl::StrCat(value, " is outside [", min, ", ", max, "]"));
  }
  *out = value;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MemhogOptions> ParseMemhogArgs(
    const std::vector<std::string>& args) {
  MemhogOptions options;
  bool have_mb = false, have_touch = false, have_run = false;
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  for (const std::string& arg : args) {
    if (arg.rfind("--", 0) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument '", arg, "'"));
    }
    std::pair<std::string, std::string> kv =
        absl::StrSplit(arg.substr(2), absl::MaxSplits('=', 1));
    const std::string& name = kv.first;
    if (name == "thp") {
      // A switch: --thp, or --thp=true|false for scripts that pass a value.
      if (arg.find('=') != std::string::npos &&
          !absl::SimpleAtob(kv.second, &options.thp)) {
        return Invalid(name, absl::StrCat("not a boolean: '", kv.second, "'"));
      }
      if (arg.find('=') == std::string::npos) options.thp = true;
      continue;
    }
    if (arg.find('=') == std::string::npos) {
      return Invalid(name, "needs a value (--name=value)");
    }
    int64_t value = 0;
    if (name == "mb") {
      RETURN_IF_ERROR(ParseInt(name, kv.second, 1, kMaxMb, &value));
      options.mb = static_cast<uint64_t>(value);
      have_mb = true;
    } else if (name == "touch_node" || name == "run_node") {
      RETURN_IF_ERROR(ParseInt(name, kv.second, 0, kIntMax, &value));
      (name == "touch_node" ? options.touch_node : options.run_node) =
          static_cast<int>(value);
      (name == "touch_node" ? have_touch : have_run) = true;
    } else if (name == "bind_node") {
      RETURN_IF_ERROR(ParseInt(name, kv.second, 0, kIntMax, &value));
      options.bind_node = static_cast<int>(value);
    } else if (name == "hot_mb") {
      RETURN_IF_ERROR(ParseInt(name, kv.second, 0, kMaxMb, &value));
      options.hot_mb = value;
    } else if (name == "wait_for") {
      if (kv.second.empty()) return Invalid(name, "needs a path");
      options.wait_for = kv.second;
    } else if (name == "report_ms") {
      RETURN_IF_ERROR(ParseInt(name, kv.second, 0, kIntMax, &value));
      options.report_ms = static_cast<int>(value);
    } else {
      return Invalid(name, "unknown flag");
    }
  }
  if (!have_mb) return Invalid("mb", "required");
  if (!have_touch) return Invalid("touch_node", "required");
  if (!have_run) return Invalid("run_node", "required");
  if (options.hot_mb > static_cast<int64_t>(options.mb)) {
    return Invalid(
        "hot_mb",
        absl::StrCat(options.hot_mb, " is more than --mb (", options.mb, ")"));
  }
  return options;
}

absl::StatusOr<uint64_t> AnonHugeBytes(absl::string_view smaps, uint64_t start,
                                       uint64_t end) {
  uint64_t bytes = 0;
  bool overlaps = false;  // whether the current mapping overlaps the range
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(smaps, '\n')) {
    ++line_number;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.empty()) continue;
    if (fields[0].back() != ':') {
      // A mapping's header: "start-end perms offset dev inode [path]".
      std::pair<absl::string_view, absl::string_view> range =
          absl::StrSplit(fields[0], absl::MaxSplits('-', 1));
      uint64_t first = 0, last = 0;
      overlaps = absl::SimpleHexAtoi(range.first, &first) &&
                 absl::SimpleHexAtoi(range.second, &last) && first < end &&
                 last > start;
      continue;
    }
    if (!overlaps || fields[0] != "AnonHugePages:") continue;
    uint64_t kib = 0;
    if (fields.size() != 3 || fields[2] != "kB" ||
        !absl::SimpleAtoi(fields[1], &kib)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "smaps line ", line_number, ": cannot parse '", line, "'"));
    }
    bytes += kib << 10;
  }
  return bytes;
}

}  // namespace locus
