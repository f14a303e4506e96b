#include "policy/tiers.h"

#include <algorithm>

namespace locus {

std::vector<char> LowerTierNodes(const Topology& topology) {
  std::vector<char> lower(topology.nodes.size(), 0);
  const bool any_cpus =
      std::any_of(topology.nodes.begin(), topology.nodes.end(),
                  [](const Node& node) { return !node.cpus.empty(); });
  for (size_t n = 0; n < topology.nodes.size(); ++n) {
    lower[n] = any_cpus && topology.nodes[n].cpus.empty();
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

}  // namespace locus
