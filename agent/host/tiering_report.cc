#include "agent/host/tiering_report.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/host/memory_tiering.h"
#include "agent/host/topology.h"
#include "agent/sensors/proc_sched.h"
#include "common/printable.h"
#include "common/utf8.h"
#include "policy/cpu_list.h"
#include "policy/tiers.h"

namespace locus {
namespace {

// NUMA_BALANCING_MEMORY_TIERING in kernel.numa_balancing: hot pages of a
// slower tier are promoted to a faster one.
constexpr int kTieringPromotion = 2;

std::string NodeList(const std::vector<int>& ids) {
  return absl::StrCat(ids.size() == 1 ? "node " : "nodes ", FormatCpuList(ids));
}

std::string Demotion(int enabled) {
  if (enabled == 1) return "the kernel demotes to it (demotion on)";
  if (enabled == 0) return "the kernel does not demote to it (demotion off)";
  return "kernel demotion unknown (no demotion_enabled)";
}

std::string Promotion(int mode) {
  if (mode < 0) return "tiering promotion unknown";
  if (mode & kTieringPromotion) {
    return absl::StrCat("promotes from it (numa_balancing=", mode, ")");
  }
  return absl::StrCat("does not promote from it (numa_balancing=", mode, ")");
}

}  // namespace

v1::MemoryTiering MemoryTieringReport(const Topology& topology,
                                      const MemoryTiering& tiering,
                                      int numa_balancing_mode) {
  v1::MemoryTiering out;
  const std::vector<char> lower = LowerTierNodes(topology);
  for (size_t n = 0; n < topology.nodes.size(); ++n) {
    const Node& node = topology.nodes[n];
    v1::TierNode* t = out.add_nodes();
    t->set_node(node.id);
    if (node.tier >= 0) t->set_tier(node.tier);
    t->set_lower_tier(lower[n] != 0);
    t->set_cpus(static_cast<uint32_t>(node.cpus.size()));
    t->set_mem_total_bytes(node.mem_total_bytes);
  }
  out.set_demotion_enabled(tiering.demotion_enabled);
  out.set_numa_balancing_mode(numa_balancing_mode);
  for (const std::string& scheme : tiering.damon_migrations) {
    out.add_damon_migrations(ValidUtf8(scheme));
  }
  out.set_promoted_total(tiering.promoted_total);
  out.set_demoted_total(tiering.demoted_total);
  return out;
}

void SetNodeTiers(v1::Metrics* metrics) {
  const v1::MemoryTiering& tiering = metrics->memory_tiering();
  for (int n = 0; n < metrics->nodes_size() && n < tiering.nodes_size(); ++n) {
    const v1::TierNode& node = tiering.nodes(n);
    v1::NodeMetrics* out = metrics->mutable_nodes(n);
    if (node.node() != out->node()) continue;  // not the same list after all
    if (node.has_tier()) out->set_tier(node.tier());
    out->set_lower_tier(node.lower_tier());
  }
}

absl::StatusOr<v1::MemoryTiering> ReadMemoryTieringReport(
    absl::string_view sysfs_root, absl::string_view procfs_root,
    std::vector<std::string>* errors) {
  absl::StatusOr<Topology> topology = ReadTopology(sysfs_root, errors);
  if (!topology.ok()) return topology.status();
  absl::StatusOr<MemoryTiering> tiering =
      ReadMemoryTiering(sysfs_root, procfs_root, errors);
  if (!tiering.ok()) return tiering.status();
  return MemoryTieringReport(*topology, *tiering,
                             ReadNumaBalancingMode(procfs_root));
}

bool HasLowerTier(const v1::MemoryTiering& tiering) {
  for (const v1::TierNode& node : tiering.nodes()) {
    if (node.lower_tier()) return true;
  }
  return false;
}

std::string TierSummary(const v1::MemoryTiering& tiering) {
  // Tier -1 sorts first but is named last: "no tier" is the odd one out.
  std::map<int, std::pair<std::vector<int>, uint32_t>> tiers;
  for (const v1::TierNode& node : tiering.nodes()) {
    auto& [ids, cpus] = tiers[node.has_tier() ? node.tier() : -1];
    ids.push_back(node.node());
    cpus += node.cpus();
  }
  std::vector<std::string> parts;
  for (const auto& [tier, nodes] : tiers) {
    if (tier < 0) continue;
    parts.push_back(absl::StrCat(
        "tier ", tier, ": ", NodeList(nodes.first), " (",
        nodes.second == 0 ? "no" : absl::StrCat(nodes.second), " CPUs)"));
  }
  auto none = tiers.find(-1);
  if (none != tiers.end()) {
    parts.push_back(absl::StrCat("no tier: ", NodeList(none->second.first)));
  }
  return absl::StrJoin(parts, "; ");
}

std::vector<std::string> TierMoverLines(const v1::MemoryTiering& tiering) {
  std::vector<std::string> lines;
  // The tier of the nodes with CPUs: a node without CPUs listed in it (6.1
  // lists every node in one) is not called lower, though Locus leaves it.
  int top = -1;
  for (const v1::TierNode& node : tiering.nodes()) {
    if (node.cpus() > 0 && node.has_tier() && (top < 0 || node.tier() < top))
      top = node.tier();
  }
  for (const v1::TierNode& node : tiering.nodes()) {
    if (!node.lower_tier()) continue;
    const bool below = !node.has_tier() || top < 0 || node.tier() > top;
    lines.push_back(absl::StrCat(
        "node ", node.node(), ": ",
        node.has_tier() ? absl::StrCat("tier ", node.tier()) : "no tier",
        below ? " (lower, " : " (the CPU nodes' tier, ",
        node.cpus() == 0 ? "no CPUs" : absl::StrCat(node.cpus(), " CPUs"),
        "): ", Demotion(tiering.demotion_enabled()), " and ",
        Promotion(tiering.numa_balancing_mode()), "; Locus leaves its pages"));
  }
  for (const std::string& scheme : tiering.damon_migrations()) {
    lines.push_back(absl::StrCat("DAMON ", Printable(scheme)));
  }
  if (tiering.promoted_total() >= 0 || tiering.demoted_total() >= 0) {
    auto count = [](int64_t n) {
      return n >= 0 ? absl::StrCat(n) : std::string("unknown");
    };
    lines.push_back(absl::StrCat(
        "since boot the kernel promoted ", count(tiering.promoted_total()),
        " pages and demoted ", count(tiering.demoted_total())));
  }
  return lines;
}

std::string MoverSettings(const v1::MemoryTiering& tiering) {
  const int demotion = tiering.demotion_enabled();
  const int mode = tiering.numa_balancing_mode();
  return absl::StrCat(
      "demotion ",
      demotion == 1   ? "on"
      : demotion == 0 ? "off"
                      : "unknown",
      "; tiering promotion ",
      mode < 0 ? "unknown"
               : absl::StrCat((mode & kTieringPromotion) ? "on" : "off",
                              " (numa_balancing=", mode, ")"),
      "; DAMON: ",
      tiering.damon_migrations().empty()
          ? "no migrate scheme"
          : absl::StrCat(tiering.damon_migrations_size(),
                         " migrate scheme(s)"));
}

}  // namespace locus
