#include "agent/host/irqs.h"

#include <algorithm>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/host/cpu_mask.h"
#include "agent/host/file_util.h"
#include "common/status_macros.h"

namespace locus {
namespace {

bool IsTriggerType(absl::string_view token) {
  for (absl::string_view suffix :
       {"-edge", "-level", "-fasteoi", "-EDGE", "-LEVEL"}) {
    if (absl::EndsWith(token, suffix)) return true;
  }
  return false;
}

// The action names are whatever follows the trigger type ("5-edge",
// "1048576-edge"); several actions are joined by ", ".
std::string NameFromTail(const std::vector<absl::string_view>& tail) {
  size_t start = tail.empty() ? 0 : tail.size() - 1;
  for (size_t i = 0; i < tail.size(); ++i) {
    if (IsTriggerType(tail[i])) {
      start = i + 1;
      break;
    }
  }
  if (start >= tail.size()) return "";
  return absl::StrJoin(tail.begin() + start, tail.end(), " ");
}

}  // namespace

absl::StatusOr<std::vector<InterruptLine>> ParseInterrupts(
    absl::string_view text, std::vector<std::string>* errors) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  std::vector<int> cpus;
  size_t first = 0;
  for (; first < lines.size(); ++first) {
    if (absl::StripAsciiWhitespace(lines[first]).empty()) continue;
    for (absl::string_view col :
         absl::StrSplit(lines[first], ' ', absl::SkipEmpty())) {
      int cpu = 0;
      if (!absl::ConsumePrefix(&col, "CPU") || !absl::SimpleAtoi(col, &cpu) ||
          cpu < 0 || cpu > kMaxCpuNumber) {
        return absl::InvalidArgumentError(
            absl::StrCat("bad header column '", col, "'"));
      }
      cpus.push_back(cpu);
    }
    break;
  }
  if (cpus.empty()) return absl::DataLossError("no CPU header (truncated?)");
  const int width = *std::max_element(cpus.begin(), cpus.end()) + 1;

  std::vector<InterruptLine> out;
  for (size_t i = first + 1; i < lines.size(); ++i) {
    absl::string_view line = absl::StripLeadingAsciiWhitespace(lines[i]);
    size_t colon = line.find(':');
    if (line.empty() || colon == absl::string_view::npos) continue;
    InterruptLine row;
    if (!absl::SimpleAtoi(line.substr(0, colon), &row.irq)) continue;  // NMI
    std::vector<absl::string_view> fields =
        absl::StrSplit(line.substr(colon + 1), ' ', absl::SkipEmpty());
    if (fields.size() < cpus.size()) {
      errors->push_back(absl::StrCat("irq ", row.irq, ": ", fields.size(),
                                     " fields for ", cpus.size(),
                                     " CPUs (truncated?)"));
      continue;
    }
    row.counts.assign(static_cast<size_t>(width), 0);
    bool ok = true;
    for (size_t c = 0; c < cpus.size(); ++c) {
      ok = ok && absl::SimpleAtoi(fields[c], &row.counts[cpus[c]]);
    }
    if (!ok) {
      errors->push_back(absl::StrCat("irq ", row.irq, ": bad count"));
      continue;
    }
    std::vector<absl::string_view> tail(fields.begin() + cpus.size(),
                                        fields.end());
    row.name = NameFromTail(tail);
    out.push_back(std::move(row));
  }
  return out;
}

int QueueFromIrqName(absl::string_view name) {
  // Trailing digits after '.', '-' or '_' ("input.0", "TxRx-3", "rx-2").
  size_t end = name.size();
  size_t start = end;
  while (start > 0 && absl::ascii_isdigit(name[start - 1])) --start;
  if (start == end || start == 0) return -1;
  char sep = name[start - 1];
  if (sep != '.' && sep != '-' && sep != '_') return -1;
  int queue = -1;
  if (!absl::SimpleAtoi(name.substr(start), &queue)) return -1;
  return queue;
}

namespace {

// IRQ -> (NIC, its device's NUMA node) from each NIC's MSI vectors. For
// virtio the netdev's device is the virtio device; the vectors belong to the
// PCI function above it.
void ReadNics(const HostPaths& paths, IrqReadCache* out) {
  out->nic_of_irq.clear();
  out->nics.clear();
  const std::string net_dir = JoinPath(paths.sysfs_root, "class/net");
  if (auto names = ListDirectory(net_dir); names.ok()) out->nics = *names;
  for (const std::string& nic : out->nics) {
    const std::string device = JoinPath(JoinPath(net_dir, nic), "device");
    int node = -1;
    for (const std::string& dir : {device, JoinPath(device, "..")}) {
      if (auto text = ReadFirstLine(JoinPath(dir, "numa_node")); text.ok()) {
        int value = -1;
        if (absl::SimpleAtoi(*text, &value) && value >= 0) node = value;
      }
      auto irqs = ListDirectory(JoinPath(dir, "msi_irqs"));
      if (!irqs.ok()) continue;
      for (const std::string& name : *irqs) {
        int irq = 0;
        if (absl::SimpleAtoi(name, &irq)) out->nic_of_irq[irq] = {nic, node};
      }
      break;
    }
  }
}

// /proc/interrupts parsed, its row errors reported as "<path>: <why>".
absl::StatusOr<std::vector<InterruptLine>> ReadInterrupts(
    const HostPaths& paths, std::vector<std::string>* errors) {
  const std::string path = JoinPath(paths.procfs_root, "interrupts");
  ASSIGN_OR_RETURN(std::string text, ReadTextFile(path, kMaxInterruptsBytes));
  std::vector<std::string> row_errors;
  auto rows = ParseInterrupts(text, &row_errors);
  if (!rows.ok()) {
    return absl::DataLossError(
        absl::StrCat(path, ": ", rows.status().message()));
  }
  for (const std::string& error : row_errors) {
    errors->push_back(absl::StrCat(path, ": ", error));
  }
  return rows;
}

// The NIC an IRQ serves and the NIC's node, from msi_irqs; without them
// (legacy INTx, some drivers) a name that starts with "<nic>-" still says
// whose queue it is.
void FindNic(const IrqReadCache& cache, IrqSample* irq) {
  auto nic = cache.nic_of_irq.find(irq->irq);
  if (nic != cache.nic_of_irq.end()) {
    irq->net_device = nic->second.name;
    irq->device_node = nic->second.node;
    return;
  }
  for (const std::string& name : cache.nics) {
    if (absl::StartsWith(irq->name, name + "-")) {
      irq->net_device = name;
      return;
    }
  }
}

// /proc/irq/N/{node,smp_affinity_list,effective_affinity_list}.
void ReadIrqFiles(const std::string& dir, IrqSample* irq,
                  std::vector<std::string>* errors) {
  if (irq->device_node < 0) {
    if (auto node = ReadFirstLine(JoinPath(dir, "node")); node.ok()) {
      int value = -1;
      if (absl::SimpleAtoi(*node, &value)) irq->device_node = value;
    }
  }
  for (auto [file, field] :
       {std::pair{"smp_affinity_list", &irq->affinity},
        std::pair{"effective_affinity_list", &irq->effective}}) {
    const std::string path = JoinPath(dir, file);
    auto value = ReadTextFile(path);
    if (!value.ok()) {
      // IRQs without a /proc/irq/N directory (e.g. chained) have no
      // affinity to read: not worth an error.
      if (!absl::IsNotFound(value.status())) {
        errors->push_back(std::string(value.status().message()));
      }
      continue;
    }
    auto cpus = ParseCpuList(*value);
    if (!cpus.ok()) {
      errors->push_back(absl::StrCat(path, ": ", cpus.status().message()));
      continue;
    }
    *field = *std::move(cpus);
  }
}

}  // namespace

absl::StatusOr<std::vector<IrqSample>> ReadIrqs(
    const HostPaths& paths, const std::set<int>& managed,
    std::vector<std::string>* errors, IrqReadCache* cache) {
  ASSIGN_OR_RETURN(std::vector<InterruptLine> rows,
                   ReadInterrupts(paths, errors));
  IrqReadCache uncached;
  if (cache == nullptr) cache = &uncached;
  bool full = cache->calls % std::max(cache->refresh_every, 1) == 0;
  ++cache->calls;
  if (full) {
    ReadNics(paths, cache);
    cache->quiet.clear();
  }
  std::vector<IrqSample> out;
  for (InterruptLine& row : rows) {
    if (auto quiet = cache->quiet.find(row.irq);
        quiet != cache->quiet.end() && quiet->second.name == row.name) {
      IrqSample irq = quiet->second;
      irq.count_per_cpu = std::move(row.counts);
      irq.managed = managed.count(row.irq) > 0;
      out.push_back(std::move(irq));
      continue;
    }
    IrqSample irq;
    irq.irq = row.irq;
    irq.name = std::move(row.name);
    irq.managed = managed.count(row.irq) > 0;
    FindNic(*cache, &irq);
    if (!irq.net_device.empty()) irq.queue = QueueFromIrqName(irq.name);
    ReadIrqFiles(JoinPath(paths.procfs_root, absl::StrCat("irq/", row.irq)),
                 &irq, errors);
    if (full && irq.net_device.empty()) cache->quiet[irq.irq] = irq;
    irq.count_per_cpu = std::move(row.counts);
    out.push_back(std::move(irq));
  }
  return out;
}

void IrqCountDeltas(const std::vector<IrqSample>& previous,
                    std::vector<IrqSample>* current) {
  std::map<int, const IrqSample*> before;
  for (const IrqSample& irq : previous) before[irq.irq] = &irq;
  for (IrqSample& irq : *current) {
    auto it = before.find(irq.irq);
    if (it == before.end()) continue;
    const std::vector<uint64_t>& old = it->second->count_per_cpu;
    for (size_t cpu = 0; cpu < irq.count_per_cpu.size(); ++cpu) {
      uint64_t prev = cpu < old.size() ? old[cpu] : 0;
      irq.count_per_cpu[cpu] =
          irq.count_per_cpu[cpu] >= prev ? irq.count_per_cpu[cpu] - prev : 0;
    }
  }
}

}  // namespace locus
