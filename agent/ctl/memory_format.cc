#include "agent/ctl/memory_format.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace locus {
namespace ctl {
namespace {

// Whether position `n` of `bytes` is a node of a lower tier; a figure past
// the nodes the report lists (an agent and a client of different ages)
// counts as a top-tier one.
bool Lower(const v1::MemoryTiering& tiering, int n) {
  return n < tiering.nodes_size() && tiering.nodes(n).lower_tier();
}

// The node id at position `n`: the report's, else the position.
int NodeId(const v1::MemoryTiering& tiering, int n) {
  return n < tiering.nodes_size() ? tiering.nodes(n).node() : n;
}

}  // namespace

std::string FormatBytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return unit == 0 ? absl::StrFormat("%.0f B", bytes)
                   : absl::StrFormat("%.1f %s", bytes, kUnits[unit]);
}

std::string MemoryByNode(const NodeBytes& bytes,
                         const v1::MemoryTiering& tiering, int home_node) {
  std::vector<std::string> top;
  std::vector<std::string> lower;
  for (int n = 0; n < bytes.size(); ++n) {
    if (bytes[n] == 0) continue;
    const int id = NodeId(tiering, n);
    (Lower(tiering, n) ? lower : top)
        .push_back(absl::StrCat("node ", id, " ", FormatBytes(bytes[n]),
                                id == home_node ? " (home)" : ""));
  }
  if (top.empty() && lower.empty()) return "none";
  std::string out = absl::StrJoin(top, ", ");
  if (!lower.empty()) {
    absl::StrAppend(&out, top.empty() ? "" : "; ",
                    "lower tier: ", absl::StrJoin(lower, ", "));
  }
  return out;
}

double TopTierAtHome(const NodeBytes& bytes, const v1::MemoryTiering& tiering,
                     int home_node) {
  if (home_node < 0) return -1;
  uint64_t top = 0;
  uint64_t home = 0;
  for (int n = 0; n < bytes.size(); ++n) {
    if (Lower(tiering, n)) continue;
    top += bytes[n];
    if (NodeId(tiering, n) == home_node) home += bytes[n];
  }
  return top > 0 ? static_cast<double>(home) / top : -1;
}

uint64_t LowerTierBytes(const NodeBytes& bytes,
                        const v1::MemoryTiering& tiering) {
  uint64_t lower = 0;
  for (int n = 0; n < bytes.size(); ++n) {
    if (Lower(tiering, n)) lower += bytes[n];
  }
  return lower;
}

}  // namespace ctl
}  // namespace locus
