#include "agent/sensors/proc_sched.h"

#include <dirent.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file_read.h"

namespace locus {
namespace {

bool ReadFile(const std::string& path, std::string* out) {
  absl::StatusOr<std::string> text = ReadRegularFile(path);
  if (!text.ok()) return false;
  *out = *std::move(text);
  return true;
}

std::vector<int32_t> NumericEntries(const std::string& dir) {
  std::vector<int32_t> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    int32_t n;
    if (absl::SimpleAtoi(e->d_name, &n)) out.push_back(n);
  }
  closedir(d);
  return out;
}

// "key=value" -> value into *v; false when the key differs or the value is
// not a number.
bool KeyValue(absl::string_view token, absl::string_view key, uint64_t* v) {
  if (!absl::ConsumePrefix(&token, key) || !absl::ConsumePrefix(&token, "="))
    return false;
  return absl::SimpleAtoi(token, v);
}

void ParseNumaFaults(absl::string_view rest, ProcSched& out) {
  // node=0 task_private=0 task_shared=0 group_private=0 group_shared=0
  ProcSchedNodeFaults f;
  uint64_t node = 0;
  bool have_node = false;
  for (absl::string_view tok : absl::StrSplit(rest, ' ', absl::SkipEmpty())) {
    if (KeyValue(tok, "node", &node)) {
      have_node = true;
    } else if (!KeyValue(tok, "task_private", &f.task_private) &&
               !KeyValue(tok, "task_shared", &f.task_shared) &&
               !KeyValue(tok, "group_private", &f.group_private)) {
      KeyValue(tok, "group_shared", &f.group_shared);
    }
  }
  if (!have_node) return;
  f.node = static_cast<int>(node);
  out.numa_faults.push_back(f);
}

}  // namespace

absl::StatusOr<ProcSched> ParseProcSched(absl::string_view text) {
  ProcSched out;
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  // Header: "comm (pid, #threads: n)"; comm may itself hold " (".
  absl::string_view header = lines.empty() ? "" : lines[0];
  size_t open = header.rfind(" (");
  if (open == absl::string_view::npos || !absl::EndsWith(header, ")")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no '<comm> (<pid>, #threads: n)' header: '", header, "'"));
  }
  out.comm = std::string(header.substr(0, open));
  absl::string_view ids = header.substr(open + 2);
  // A header without a readable pid still names the task: pid stays 0.
  if (!absl::SimpleAtoi(ids.substr(0, ids.find(',')), &out.pid)) out.pid = 0;

  for (size_t i = 1; i < lines.size(); ++i) {
    absl::string_view line = absl::StripAsciiWhitespace(lines[i]);
    if (absl::ConsumePrefix(&line, "numa_faults ")) {
      ParseNumaFaults(line, out);
      continue;
    }
    if (absl::StartsWith(line, "current_node=")) {
      // current_node=0, numa_group_id=0
      absl::string_view v = line.substr(strlen("current_node="));
      if (!absl::SimpleAtoi(v.substr(0, v.find(',')), &out.current_node)) {
        out.current_node = -1;
      }
      continue;
    }
    size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    std::string key(absl::StripAsciiWhitespace(line.substr(0, colon)));
    absl::string_view value =
        absl::StripAsciiWhitespace(line.substr(colon + 1));
    out.fields[key] = std::string(value);
  }
  auto int_field = [&](const char* name, int64_t* v) {
    auto it = out.fields.find(name);
    int64_t parsed;
    if (it != out.fields.end() && absl::SimpleAtoi(it->second, &parsed)) {
      *v = parsed;  // SimpleAtoi zeroes its output on failure
    }
  };
  int_field("se.nr_migrations", &out.nr_migrations);
  int_field("numa_preferred_nid", &out.numa_preferred_nid);
  int_field("total_numa_faults", &out.total_numa_faults);
  return out;
}

std::vector<ProcTaskSched> ReadAllProcSched(absl::string_view procfs_root,
                                            uint64_t* skipped) {
  std::vector<ProcTaskSched> out;
  std::string root(procfs_root);
  for (int32_t pid : NumericEntries(root)) {
    std::string task_dir = absl::StrCat(root, "/", pid, "/task");
    for (int32_t tid : NumericEntries(task_dir)) {
      std::string text;
      if (!ReadFile(absl::StrCat(task_dir, "/", tid, "/sched"), &text)) {
        ++*skipped;
        continue;
      }
      absl::StatusOr<ProcSched> parsed = ParseProcSched(text);
      if (!parsed.ok()) {
        ++*skipped;
        continue;
      }
      out.push_back({pid, tid, *std::move(parsed)});
    }
  }
  return out;
}

int ReadNumaBalancingMode(absl::string_view procfs_root) {
  std::string text;
  if (!ReadFile(absl::StrCat(procfs_root, "/sys/kernel/numa_balancing"),
                &text)) {
    return -1;
  }
  int v = 0;
  return absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &v) && v >= 0 ? v
                                                                          : -1;
}

bool ReadNumaBalancing(absl::string_view procfs_root) {
  return ReadNumaBalancingMode(procfs_root) > 0;
}

}  // namespace locus
