#include "agent/ctl/tiers_format.h"

#include "absl/strings/str_cat.h"
#include "agent/ctl/memory_format.h"
#include "agent/host/tiering_report.h"
#include "common/printable.h"

namespace locus {
namespace ctl {
namespace {

std::string Indented(const v1::MemoryTiering& tiering) {
  std::string out;
  for (const std::string& line : TierMoverLines(tiering)) {
    absl::StrAppend(&out, "  ", line, "\n");
  }
  return out;
}

}  // namespace

std::string TiersForStatus(const v1::MemoryTiering& tiering) {
  if (!HasLowerTier(tiering)) return "";
  return absl::StrCat("memory tiers: ", TierSummary(tiering), "\n",
                      Indented(tiering));
}

std::string WorkerMemoryForStatus(
    const v1::MemoryTiering& tiering,
    const google::protobuf::RepeatedPtrField<v1::WorkerMemory>& workers) {
  if (!HasLowerTier(tiering) || workers.empty()) return "";
  std::string out = "worker memory (resident, by node and tier):\n";
  for (const v1::WorkerMemory& w : workers) {
    absl::StrAppend(
        &out, "  pid ", w.pid(), " (", Printable(w.comm()),
        "): ", MemoryByNode(w.resident_bytes(), tiering, w.home_node()), "\n");
  }
  return out;
}

std::string TiersForProbe(const v1::MemoryTiering& tiering) {
  if (tiering.nodes().empty()) return "";
  std::string summary = TierSummary(tiering);
  // Nodes in no tier are the whole summary where the kernel lists none.
  bool any_tier = false;
  for (const v1::TierNode& node : tiering.nodes()) any_tier |= node.has_tier();
  return absl::StrCat(
      "memory tiers: ",
      any_tier ? summary : "none listed by the kernel (before 6.1?)",
      HasLowerTier(tiering) ? "" : "; no lower tier", "\n  ",
      MoverSettings(tiering), "\n", Indented(tiering));
}

}  // namespace ctl
}  // namespace locus
