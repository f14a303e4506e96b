#include "agent/host/topology.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/host/cpu_mask.h"
#include "agent/host/file_util.h"
#include "common/log.h"
#include "common/status_macros.h"

namespace locus {
namespace {

// Distances the kernel uses when firmware gives none (LOCAL_DISTANCE and
// REMOTE_DISTANCE in include/linux/topology.h).
constexpr int kLocalDistance = 10;
constexpr int kRemoteDistance = 20;

struct MemInfo {
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;
};

// "Node 0 MemTotal:        4548384 kB" lines; MemTotal and MemFree are
// required, everything else is ignored.
absl::StatusOr<MemInfo> ParseNodeMemInfo(absl::string_view text,
                                         const std::string& path) {
  MemInfo info;
  bool have_total = false;
  bool have_free = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    // Node, N, Key:, value, [kB]
    if (fields.size() < 4 || fields[0] != "Node") continue;
    absl::string_view key = fields[2];
    if (key != "MemTotal:" && key != "MemFree:") continue;
    uint64_t value = 0;
    if (!absl::SimpleAtoi(fields[3], &value)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": bad value in line '", line, "'"));
    }
    uint64_t scale = (fields.size() >= 5 && fields[4] == "kB") ? 1024 : 1;
    if (key == "MemTotal:") {
      info.total_bytes = value * scale;
      have_total = true;
    } else {
      info.free_bytes = value * scale;
      have_free = true;
    }
  }
  if (!have_total || !have_free) {
    return absl::DataLossError(absl::StrCat(path, ": no ",
                                            have_total ? "MemFree" : "MemTotal",
                                            " line (truncated?)"));
  }
  return info;
}

absl::StatusOr<std::vector<int>> ParseDistances(absl::string_view text,
                                                const std::string& path,
                                                size_t expected) {
  std::vector<int> distances;
  for (absl::string_view field :
       absl::StrSplit(absl::StripAsciiWhitespace(text), absl::ByAnyChar(" \t"),
                      absl::SkipEmpty())) {
    int value = 0;
    if (!absl::SimpleAtoi(field, &value) || value <= 0 || value > 255) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": bad distance '", field, "'"));
    }
    distances.push_back(value);
  }
  if (distances.size() != expected) {
    return absl::DataLossError(absl::StrCat(
        path, ": ", distances.size(), " distances for ", expected, " nodes"));
  }
  return distances;
}

void Report(std::vector<std::string>* errors, const absl::Status& status) {
  errors->push_back(std::string(status.message()));
}

// The node directories under `node_dir` by id, ascending.
absl::StatusOr<std::vector<std::pair<int, std::string>>> NodeDirs(
    const std::string& node_dir) {
  ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectory(node_dir));
  std::vector<std::pair<int, std::string>> node_dirs;
  for (const std::string& name : names) {
    int id = 0;
    if (!absl::StartsWith(name, "node")) continue;
    // Only the kernel's own spelling: "node00" would be node 0 a second time.
    const absl::string_view digits = absl::string_view(name).substr(4);
    if (!absl::SimpleAtoi(digits, &id) || id < 0 ||
        absl::StrCat(id) != digits) {
      continue;  // e.g. "node_online"-style entries are not nodes
    }
    node_dirs.emplace_back(id, JoinPath(node_dir, name));
  }
  std::sort(node_dirs.begin(), node_dirs.end());
  if (node_dirs.empty()) {
    return absl::NotFoundError(
        absl::StrCat(node_dir, ": no node* directories"));
  }
  return node_dirs;
}

// The CPUs cpu/online and cpu/present name.
struct CpuState {
  std::vector<int> online;
  // Without cpu/online every CPU a node lists is taken as online (the
  // kernel removes offlined CPUs from node masks on x86 anyway).
  bool have_online = false;
  int max_cpu = -1;  // the highest CPU seen anywhere
};

CpuState ReadCpuState(const std::string& cpu_dir,
                      std::vector<std::string>* errors) {
  CpuState state;
  const std::string path = JoinPath(cpu_dir, "online");
  absl::StatusOr<std::string> text = ReadFirstLine(path);
  absl::StatusOr<std::vector<int>> parsed =
      text.ok() ? ParseCpuList(*text) : text.status();
  if (parsed.ok()) {
    state.online = *std::move(parsed);
    state.have_online = true;
  } else {
    Report(errors, text.ok() ? absl::InvalidArgumentError(absl::StrCat(
                                   path, ": ", parsed.status().message()))
                             : parsed.status());
  }
  state.max_cpu = state.online.empty() ? -1 : state.online.back();
  // Optional: present CPUs only widen cpu_node so offline ones show as -1.
  absl::StatusOr<std::string> present_text =
      ReadFirstLine(JoinPath(cpu_dir, "present"));
  if (present_text.ok()) {
    absl::StatusOr<std::vector<int>> present = ParseCpuList(*present_text);
    if (present.ok() && !present->empty()) {
      state.max_cpu = std::max(state.max_cpu, present->back());
    }
  }
  return state;
}

// A node's online CPUs (widening cpus->max_cpu) and memory; what cannot be
// read is reported and left at its default.
Node ReadNode(int id, const std::string& dir, CpuState* cpus,
              std::vector<std::string>* errors) {
  Node node;
  node.id = id;
  const std::string cpulist_path = JoinPath(dir, "cpulist");
  absl::StatusOr<std::string> cpulist = ReadTextFile(cpulist_path);
  absl::StatusOr<std::vector<int>> listed =
      cpulist.ok() ? ParseCpuList(*cpulist) : cpulist.status();
  if (listed.ok()) {
    if (!listed->empty())
      cpus->max_cpu = std::max(cpus->max_cpu, listed->back());
    node.cpus = cpus->have_online ? IntersectCpus(*listed, cpus->online)
                                  : *std::move(listed);
  } else {
    Report(errors, cpulist.ok()
                       ? absl::InvalidArgumentError(absl::StrCat(
                             cpulist_path, ": ", listed.status().message()))
                       : listed.status());
  }
  const std::string meminfo_path = JoinPath(dir, "meminfo");
  absl::StatusOr<std::string> meminfo = ReadTextFile(meminfo_path);
  absl::StatusOr<MemInfo> mem = meminfo.ok()
                                    ? ParseNodeMemInfo(*meminfo, meminfo_path)
                                    : meminfo.status();
  if (mem.ok()) {
    node.mem_total_bytes = mem->total_bytes;
    node.mem_free_bytes = mem->free_bytes;
  } else {
    Report(errors, mem.status());
  }
  return node;
}

// Distances come in the order of online node ids, which is the order of
// Topology::nodes: read once the node count is known. A node whose distances
// cannot be read gets the kernel's defaults.
void ReadDistances(const std::vector<std::pair<int, std::string>>& node_dirs,
                   Topology* topology, std::vector<std::string>* errors) {
  const size_t count = topology->nodes.size();
  for (size_t i = 0; i < count; ++i) {
    const std::string path = JoinPath(node_dirs[i].second, "distance");
    absl::StatusOr<std::string> text = ReadTextFile(path);
    absl::StatusOr<std::vector<int>> distances =
        text.ok() ? ParseDistances(*text, path, count) : text.status();
    std::vector<int>& out = topology->nodes[i].distances;
    if (distances.ok()) {
      out = *std::move(distances);
    } else {
      Report(errors, distances.status());
      out.assign(count, kRemoteDistance);
      out[i] = kLocalDistance;
    }
  }
}

// Each node's tier from <sysfs_root>/devices/virtual/memory_tiering/
// memory_tierN/nodelist. No memory_tiering directory (a kernel before 6.1)
// leaves every tier unknown; a tier whose nodelist cannot be read leaves its
// nodes unknown, which policy/tiers.h treats as no tier rather than a wrong
// one.
void ReadTiers(absl::string_view sysfs_root, Topology* topology,
               std::vector<std::string>* errors) {
  const std::string dir =
      JoinPath(sysfs_root, "devices/virtual/memory_tiering");
  absl::StatusOr<std::vector<std::string>> names = ListDirectory(dir);
  if (!names.ok()) {
    if (!absl::IsNotFound(names.status())) Report(errors, names.status());
    return;
  }
  constexpr absl::string_view kPrefix = "memory_tier";
  for (const std::string& name : *names) {
    if (!absl::StartsWith(name, kPrefix)) continue;
    const absl::string_view digits =
        absl::string_view(name).substr(kPrefix.size());
    int tier = 0;
    if (!absl::SimpleAtoi(digits, &tier) || tier < 0 ||
        absl::StrCat(tier) != digits) {
      continue;
    }
    const std::string path = JoinPath(JoinPath(dir, name), "nodelist");
    absl::StatusOr<std::string> text = ReadTextFile(path);
    // A nodelist is a node mask in the cpulist format ("0-1,3").
    absl::StatusOr<std::vector<int>> ids =
        text.ok() ? ParseCpuList(*text) : text.status();
    if (!ids.ok()) {
      Report(errors, text.ok() ? absl::InvalidArgumentError(absl::StrCat(
                                     path, ": ", ids.status().message()))
                               : ids.status());
      continue;
    }
    for (int id : *ids) {
      const int index = NodeIndex(*topology, id);
      if (index < 0) continue;  // offline since: nothing to label
      Node& node = topology->nodes[static_cast<size_t>(index)];
      if (node.tier >= 0 && node.tier != tier) {
        errors->push_back(absl::StrCat(path, ": node ", id,
                                       " also in memory_tier", node.tier,
                                       "; keeping memory_tier", node.tier));
        continue;
      }
      node.tier = tier;
    }
  }
}

// Fills cpu_node for CPUs 0..max_cpu; a CPU claimed by two nodes stays only
// in the first.
void PlaceCpus(int max_cpu, const std::string& node_dir, Topology* topology,
               std::vector<std::string>* errors) {
  topology->cpu_node.assign(static_cast<size_t>(max_cpu + 1), -1);
  for (const Node& node : topology->nodes) {
    for (int cpu : node.cpus) {
      int& slot = topology->cpu_node[static_cast<size_t>(cpu)];
      if (slot != -1 && slot != node.id) {
        errors->push_back(absl::StrCat(node_dir, ": cpu ", cpu,
                                       " listed in node ", slot, " and node ",
                                       node.id, "; keeping node ", slot));
        continue;
      }
      slot = node.id;
    }
  }
  for (Node& node : topology->nodes) {
    std::erase_if(node.cpus, [&](int cpu) {
      return topology->cpu_node[static_cast<size_t>(cpu)] != node.id;
    });
  }
}

}  // namespace

absl::StatusOr<Topology> ReadTopology(absl::string_view sysfs_root,
                                      std::vector<std::string>* errors) {
  std::vector<std::string> local_errors;
  if (errors == nullptr) errors = &local_errors;
  const std::string node_dir = JoinPath(sysfs_root, "devices/system/node");
  ASSIGN_OR_RETURN(auto node_dirs, NodeDirs(node_dir));
  CpuState cpus =
      ReadCpuState(JoinPath(sysfs_root, "devices/system/cpu"), errors);
  Topology topology;
  for (const auto& [id, dir] : node_dirs) {
    topology.nodes.push_back(ReadNode(id, dir, &cpus, errors));
  }
  ReadDistances(node_dirs, &topology, errors);
  PlaceCpus(cpus.max_cpu, node_dir, &topology, errors);
  ReadTiers(sysfs_root, &topology, errors);
  if (errors == &local_errors) {
    for (const std::string& error : local_errors) {
      LogWarning("topology: ", error);
    }
  }
  return topology;
}

absl::StatusOr<Topology> ReadTopology(absl::string_view sysfs_root) {
  return ReadTopology(sysfs_root, nullptr);
}

int NodeOfCpu(const Topology& topology, int cpu) {
  if (cpu < 0 || static_cast<size_t>(cpu) >= topology.cpu_node.size()) {
    return -1;
  }
  return topology.cpu_node[static_cast<size_t>(cpu)];
}

int NodeIndex(const Topology& topology, int node_id) {
  for (size_t i = 0; i < topology.nodes.size(); ++i) {
    if (topology.nodes[i].id == node_id) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace locus
