#include "agent/host/proc_parse.h"

#include <set>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/host/cpu_mask.h"

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
  uint64_t utime = 0, stime = 0;
  if (f.size() < 39 - 3 + 1) {
    return absl::DataLossError(
        absl::StrCat("only ", f.size() + 2, " fields, want 39 (truncated?)"));
  }
  if (f[0].size() != 1 || !absl::SimpleAtoi(f[1], &stat.ppid) ||
      !absl::SimpleAtoi(f[14 - 3], &utime) ||
      !absl::SimpleAtoi(f[15 - 3], &stime) ||
      !absl::SimpleAtoi(f[20 - 3], &stat.num_threads) ||
      !absl::SimpleAtoi(f[22 - 3], &stat.start_time) ||
      !absl::SimpleAtoi(f[39 - 3], &stat.processor)) {
    return absl::InvalidArgumentError(
        "bad state, ppid, utime, stime, num_threads, starttime or processor");
  }
  stat.cpu_ticks = utime + stime;
  stat.state = f[0][0];
  return stat;
}

absl::StatusOr<Schedstat> ParseSchedstat(absl::string_view text) {
  std::vector<absl::string_view> fields =
      absl::StrSplit(text, absl::ByAnyChar(" \n"), absl::SkipEmpty());
  Schedstat out;
  if (fields.size() < 3 || !absl::SimpleAtoi(fields[0], &out.run_ns) ||
      !absl::SimpleAtoi(fields[1], &out.wait_ns) ||
      !absl::SimpleAtoi(fields[2], &out.slices)) {
    return absl::InvalidArgumentError(
        "not three counters (on-CPU ns, wait ns, timeslices)");
  }
  return out;
}

absl::StatusOr<std::vector<int>> ParseStatusCpusAllowed(
    absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, "Cpus_allowed_list:")) continue;
    return ParseCpuList(line);
  }
  return absl::DataLossError("no Cpus_allowed_list line (truncated?)");
}

std::vector<absl::string_view> ParseStatusValues(absl::string_view text,
                                                 absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, key) || !absl::ConsumePrefix(&line, ":")) {
      continue;
    }
    std::vector<absl::string_view> values =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    return values;
  }
  return {};
}

absl::StatusOr<uint64_t> ParseStatusMask(absl::string_view text,
                                         absl::string_view key) {
  std::vector<absl::string_view> values = ParseStatusValues(text, key);
  uint64_t mask = 0;
  if (values.size() != 1 || !absl::SimpleHexAtoi(values[0], &mask)) {
    return absl::DataLossError(
        absl::StrCat(values.empty() ? "no " : "bad ", key, " line"));
  }
  return mask;
}

absl::StatusOr<StatusUids> ParseStatusUids(absl::string_view text) {
  std::vector<absl::string_view> ids = ParseStatusValues(text, "Uid");
  StatusUids uids;
  if (ids.empty()) return absl::DataLossError("no Uid line (truncated?)");
  if (ids.size() < 2 || !absl::SimpleAtoi(ids[0], &uids.real) ||
      !absl::SimpleAtoi(ids[1], &uids.effective)) {
    return absl::DataLossError("bad Uid line");
  }
  return uids;
}

absl::StatusOr<StatusSwitches> ParseStatusSwitches(absl::string_view text) {
  StatusSwitches out;
  for (auto [key, value] : {std::pair<absl::string_view, uint64_t*>{
                                "voluntary_ctxt_switches", &out.voluntary},
                            {"nonvoluntary_ctxt_switches", &out.involuntary}}) {
    std::vector<absl::string_view> values = ParseStatusValues(text, key);
    if (values.size() != 1 || !absl::SimpleAtoi(values[0], value)) {
      return absl::DataLossError(
          absl::StrCat(values.empty() ? "no " : "bad ", key, " line"));
    }
  }
  return out;
}

absl::StatusOr<uint32_t> ParseStatusRealUid(absl::string_view text) {
  absl::StatusOr<StatusUids> uids = ParseStatusUids(text);
  if (!uids.ok()) return uids.status();
  return uids->real;
}

std::vector<std::string> ParseCmdlineArgs(absl::string_view text) {
  while (!text.empty() && text.back() == '\0') text.remove_suffix(1);
  if (text.empty()) return {};
  return absl::StrSplit(text, '\0');
}

std::string ParseCmdline(absl::string_view text) {
  return absl::StrJoin(ParseCmdlineArgs(text), " ");
}

std::vector<CgroupLine> ParseCgroupLines(absl::string_view text) {
  std::vector<CgroupLine> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<absl::string_view> parts =
        absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (parts.size() < 3) continue;
    out.push_back({parts[0], parts[1], parts[2]});
  }
  return out;
}

std::string ParseCgroupPath(absl::string_view text) {
  std::string systemd;
  for (const CgroupLine& line : ParseCgroupLines(text)) {
    if (line.hierarchy == "0" && line.controllers.empty()) {
      return std::string(line.path);
    }
    if (line.controllers == "name=systemd") systemd = std::string(line.path);
  }
  return systemd;
}

std::string SystemdUnitOf(absl::string_view cgroup_path) {
  std::vector<absl::string_view> parts =
      absl::StrSplit(cgroup_path, '/', absl::SkipEmpty());
  for (absl::string_view part : parts) {
    // Slices hold units and nothing else: only the system's manager made
    // them, so the first other component is the unit it placed there.
    if (absl::EndsWith(part, ".slice")) continue;
    if (absl::EndsWith(part, ".service") || absl::EndsWith(part, ".scope")) {
      return std::string(part);
    }
    return "";
  }
  return "";
}

bool IsUserManagerUnit(absl::string_view unit) {
  return absl::StartsWith(unit, "user@") && absl::EndsWith(unit, ".service");
}

std::optional<int32_t> ParseFlockHolder(absl::string_view proc_locks,
                                        uint32_t dev_major, uint32_t dev_minor,
                                        uint64_t inode) {
  // "1: FLOCK  ADVISORY  WRITE 1234 fe:00:10952735 0 EOF"
  for (absl::string_view line : absl::StrSplit(proc_locks, '\n')) {
    std::vector<absl::string_view> f =
        absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (f.size() < 6 || f[1] != "FLOCK") continue;
    std::vector<absl::string_view> id = absl::StrSplit(f[5], ':');
    uint32_t major = 0;
    uint32_t minor = 0;
    uint64_t ino = 0;
    int32_t pid = 0;
    if (id.size() == 3 && absl::SimpleHexAtoi(id[0], &major) &&
        absl::SimpleHexAtoi(id[1], &minor) && absl::SimpleAtoi(id[2], &ino) &&
        absl::SimpleAtoi(f[4], &pid) && major == dev_major &&
        minor == dev_minor && ino == inode) {
      return pid;
    }
  }
  return std::nullopt;
}

std::vector<MemRange> ParseMigratableRanges(
    absl::string_view maps, std::optional<absl::string_view> numa_maps,
    uint64_t max_bytes) {
  // Mappings with resident pages, by start address: a mapping with none is
  // not worth walking.
  std::set<uint64_t> resident;
  if (numa_maps.has_value()) {
    for (absl::string_view line : absl::StrSplit(*numa_maps, '\n')) {
      uint64_t start = 0;
      size_t space = line.find(' ');
      if (space == absl::string_view::npos ||
          !absl::SimpleHexAtoi(line.substr(0, space), &start)) {
        continue;
      }
      for (absl::string_view field : absl::StrSplit(line, ' ')) {
        if (field.size() > 2 && field[0] == 'N' &&
            absl::ascii_isdigit(field[1])) {
          resident.insert(start);
          break;
        }
      }
    }
  }
  std::vector<MemRange> ranges;
  for (absl::string_view line : absl::StrSplit(maps, '\n')) {
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() < 5 || fields[1].size() < 4) continue;
    absl::string_view perms = fields[1];
    if (perms[0] != 'r' || perms[1] != 'w' || perms[3] != 'p') continue;
    if (fields.size() >= 6 && absl::StartsWith(fields[5], "[v")) continue;
    std::vector<absl::string_view> bounds = absl::StrSplit(fields[0], '-');
    MemRange range;
    if (bounds.size() != 2 || !absl::SimpleHexAtoi(bounds[0], &range.start) ||
        !absl::SimpleHexAtoi(bounds[1], &range.end) ||
        range.end <= range.start) {
      continue;
    }
    if (numa_maps.has_value() && !resident.count(range.start)) continue;
    if (range.end - range.start > max_bytes) continue;
    ranges.push_back(range);
  }
  return ranges;
}

}  // namespace locus
