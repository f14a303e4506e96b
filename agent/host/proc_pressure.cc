#include "agent/host/proc_pressure.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/host/file_util.h"
#include "agent/host/proc_parse.h"
#include "common/file_read.h"

namespace locus {
namespace {

// /proc/stat of a host with thousands of CPUs stays well under this.
constexpr size_t kMaxProcStatBytes = 4 << 20;
constexpr size_t kMaxSchedstatBytes = 256;

uint64_t Growth(uint64_t now, uint64_t before) {
  return now >= before ? now - before : 0;  // a counter reset starts afresh
}

// "cpuN user nice system idle iowait irq softirq steal [guest guest_nice]";
// guest time is already in user and nice.
bool ParseCpuLine(absl::string_view line, CpuTimes* out) {
  std::vector<absl::string_view> fields =
      absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (fields.size() < 9 || !absl::ConsumePrefix(&fields[0], "cpu") ||
      !absl::SimpleAtoi(fields[0], &out->cpu) || out->cpu < 0) {
    return false;
  }
  uint64_t v[8];
  for (int i = 0; i < 8; ++i) {
    if (!absl::SimpleAtoi(fields[i + 1], &v[i])) return false;
  }
  out->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  out->total = out->busy + v[3] + v[4];
  return true;
}

}  // namespace

absl::StatusOr<std::vector<CpuTimes>> ParseProcStatCpus(
    absl::string_view text) {
  std::vector<CpuTimes> cpus;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    // The total line reads "cpu  ..."; per-CPU lines "cpuN ...".
    if (!absl::StartsWith(line, "cpu") || absl::StartsWith(line, "cpu ")) {
      continue;
    }
    CpuTimes times;
    if (ParseCpuLine(line, &times)) cpus.push_back(times);
  }
  if (cpus.empty()) return absl::InvalidArgumentError("no per-CPU line");
  return cpus;
}

absl::StatusOr<double> ParseCpuPressureAvg300(absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, "some ")) continue;
    for (absl::string_view field : absl::StrSplit(line, ' ')) {
      double percent = 0;
      if (absl::ConsumePrefix(&field, "avg300=") &&
          absl::SimpleAtod(field, &percent) && percent >= 0) {
        return std::min(1.0, percent / 100);
      }
    }
  }
  return absl::InvalidArgumentError("no \"some ... avg300=\" figure");
}

void PressureSampler::Sample(Snapshot* snapshot,
                             std::vector<std::string>* errors) {
  SampleCpus(snapshot, errors);
  SampleThreads(snapshot, errors);
}

void PressureSampler::SampleCpus(Snapshot* snapshot,
                                 std::vector<std::string>* errors) {
  const std::string path = JoinPath(procfs_root_, "stat");
  absl::StatusOr<std::string> text =
      ReadRegularFile(path, {.max_bytes = kMaxProcStatBytes});
  absl::StatusOr<std::vector<CpuTimes>> cpus =
      text.ok() ? ParseProcStatCpus(*text) : text.status();
  if (!cpus.ok()) {
    errors->push_back(absl::StrCat(path, ": ", cpus.status().message()));
    return;
  }
  std::vector<CpuTimes> by_cpu;
  for (const CpuTimes& c : *cpus) {
    if (c.cpu >= static_cast<int>(by_cpu.size())) by_cpu.resize(c.cpu + 1);
    by_cpu[c.cpu] = c;
    if (c.cpu >= static_cast<int>(snapshot->cpus.size())) {
      snapshot->cpus.resize(c.cpu + 1);
    }
    CpuSample& out = snapshot->cpus[c.cpu];
    out.cpu = c.cpu;
    out.busy_all = -1;
    if (c.cpu >= static_cast<int>(cpus_.size()) || cpus_[c.cpu].cpu != c.cpu) {
      continue;
    }
    const uint64_t total = Growth(c.total, cpus_[c.cpu].total);
    if (total == 0) continue;  // read twice within one clock tick
    out.busy_all = std::min(
        1.0, static_cast<double>(Growth(c.busy, cpus_[c.cpu].busy)) / total);
  }
  cpus_ = std::move(by_cpu);
}

void PressureSampler::SampleThreads(Snapshot* snapshot,
                                    std::vector<std::string>* errors) {
  absl::flat_hash_map<int32_t, uint64_t> now;
  for (Target& target : snapshot->targets) {
    const int32_t process = ProcessOf(target);
    for (ThreadSample& thread : target.threads) {
      thread.wait_ns = 0;
      const std::string path =
          JoinPath(procfs_root_,
                   absl::StrCat(process, "/task/", thread.tid, "/schedstat"));
      absl::StatusOr<std::string> text =
          ReadRegularFile(path, {.max_bytes = kMaxSchedstatBytes});
      if (absl::IsNotFound(text.status())) continue;  // the thread exited
      absl::StatusOr<Schedstat> stat =
          text.ok() ? ParseSchedstat(*text) : text.status();
      if (!stat.ok()) {
        errors->push_back(absl::StrCat(path, ": ", stat.status().message()));
        continue;
      }
      now[thread.tid] = stat->wait_ns;
      auto before = wait_.find(thread.tid);
      if (before != wait_.end()) {
        thread.wait_ns = Growth(stat->wait_ns, before->second);
      }
    }
  }
  wait_ = std::move(now);
}

}  // namespace locus
