#include "agent/host/proc_parse.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/host/cpu_list.h"

namespace locus {

absl::StatusOr<ProcStat> ParseProcStat(absl::string_view text) {
  // comm can hold anything, ')' included: it ends at the *last* ')'.
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == absl::string_view::npos || close == absl::string_view::npos ||
      close < open) {
    return absl::InvalidArgumentError("no '(comm)' field (truncated?)");
  }
  ProcStat stat;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text.substr(0, open)),
                        &stat.pid)) {
    return absl::InvalidArgumentError("bad pid field");
  }
  stat.comm = std::string(text.substr(open + 1, close - open - 1));
  std::vector<absl::string_view> f =
      absl::StrSplit(absl::StripAsciiWhitespace(text.substr(close + 1)), ' ',
                     absl::SkipEmpty());
  // f[0] is field 3 (state): field N is f[N - 3].
  if (f.size() < 39 - 3 + 1) {
    return absl::DataLossError(
        absl::StrCat("only ", f.size() + 2, " fields, want 39 (truncated?)"));
  }
  if (f[0].size() != 1 || !absl::SimpleAtoi(f[1], &stat.ppid) ||
      !absl::SimpleAtoi(f[20 - 3], &stat.num_threads) ||
      !absl::SimpleAtoi(f[22 - 3], &stat.start_time) ||
      !absl::SimpleAtoi(f[39 - 3], &stat.processor)) {
    return absl::InvalidArgumentError(
        "bad state, ppid, num_threads, starttime or processor");
  }
  stat.state = f[0][0];
  return stat;
}

absl::StatusOr<std::vector<int>> ParseStatusCpusAllowed(
    absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, "Cpus_allowed_list:")) continue;
    return ParseCpuList(line);
  }
  return absl::DataLossError("no Cpus_allowed_list line (truncated?)");
}

std::string ParseCmdline(absl::string_view text) {
  while (!text.empty() && text.back() == '\0') text.remove_suffix(1);
  std::vector<absl::string_view> args = absl::StrSplit(text, '\0');
  return absl::StrJoin(args, " ");
}

std::string ParseCgroupPath(absl::string_view text) {
  std::string systemd;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, "0::")) return std::string(line);
    std::vector<absl::string_view> parts = absl::StrSplit(line, ':');
    if (parts.size() >= 3 && parts[1] == "name=systemd") {
      systemd = std::string(line.substr(parts[0].size() + parts[1].size() + 2));
    }
  }
  return systemd;
}

std::string SystemdUnitOf(absl::string_view cgroup_path) {
  std::vector<absl::string_view> parts =
      absl::StrSplit(cgroup_path, '/', absl::SkipEmpty());
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (absl::EndsWith(*it, ".service") || absl::EndsWith(*it, ".scope")) {
      return std::string(*it);
    }
  }
  return "";
}

}  // namespace locus
