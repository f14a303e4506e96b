#include "policy/tiers.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace locus {

int TopTier(const Topology& topology) {
  int top = -1;
  for (const Node& node : topology.nodes) {
    if (node.cpus.empty() || node.tier < 0) continue;
    top = top < 0 ? node.tier : std::min(top, node.tier);
  }
  return top;
}

std::vector<char> LowerTierNodes(const Topology& topology) {
  std::vector<char> lower(topology.nodes.size(), 0);
  const bool any_cpus =
      std::any_of(topology.nodes.begin(), topology.nodes.end(),
                  [](const Node& node) { return !node.cpus.empty(); });
  for (size_t n = 0; n < topology.nodes.size(); ++n) {
    const Node& node = topology.nodes[n];
    lower[n] = any_cpus && node.cpus.empty();
  }
  return lower;
}

std::vector<int> LowerTierIds(const Topology& topology) {
  const std::vector<char> lower = LowerTierNodes(topology);
  std::vector<int> ids;
  for (size_t n = 0; n < lower.size(); ++n) {
    if (lower[n]) ids.push_back(topology.nodes[n].id);
  }
  return ids;
}

std::string TierName(const Node& node, bool lower) {
  return absl::StrCat(node.tier >= 0 ? absl::StrCat("tier ", node.tier)
                                     : std::string("no tier"),
                      lower ? " (lower)" : "");
}

}  // namespace locus
