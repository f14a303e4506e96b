#include "agent/doctor/doctor_tiers.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/doctor/doctor_verdict.h"
#include "agent/host/tiering_report.h"

namespace locus {

using doctor_internal::Ok;
using doctor_internal::Warn;

namespace {

constexpr char kName[] = "memory tiers";

// Whether anything brings hot pages up from a lower tier: the kernel's
// tiering promotion, or a DAMON scheme that migrates hot pages. Unknown
// (no numa_balancing file) counts as yes: no advice on a guess.
bool SomethingPromotes(const v1::MemoryTiering& tiering) {
  const int mode = tiering.numa_balancing_mode();
  if (mode < 0 || (mode & 2) != 0) return true;
  for (const std::string& scheme : tiering.damon_migrations()) {
    if (absl::StrContains(scheme, "migrate_hot")) return true;
  }
  return false;
}

}  // namespace

DoctorCheck MemoryTiersCheck(const DoctorInputs& in) {
  if (!in.memory_tiering.has_value()) {
    return Ok(kName, "not read (the topology is unreadable: see numa)");
  }
  const v1::MemoryTiering& tiering = *in.memory_tiering;
  std::string detail = TierSummary(tiering);
  if (!HasLowerTier(tiering)) {
    detail = absl::StrCat("no lower tier",
                          detail.empty() ? "" : absl::StrCat(" (", detail, ")"),
                          "; ", MoverSettings(tiering));
  } else {
    // The tiers, then one line per mover: what the kernel and DAMON do to
    // the lower tier, and that Locus leaves it to them.
    absl::StrAppend(&detail, "\n", MoverSettings(tiering), "\n",
                    absl::StrJoin(TierMoverLines(tiering), "\n"));
  }
  if (!in.memory_tiering_errors.empty()) {
    return Warn(kName,
                absl::StrCat(detail, "\nunreadable: ",
                             absl::StrJoin(in.memory_tiering_errors, "\n")),
                "the files named above are the kernel's; what they say is "
                "shown as unknown until they read");
  }
  if (HasLowerTier(tiering) && !SomethingPromotes(tiering)) {
    return Warn(kName,
                absl::StrCat(detail,
                             "\nnothing promotes hot pages off the lower "
                             "tier: a worker's pages there stay slow, and "
                             "Locus leaves them"),
                "`sysctl -w kernel.numa_balancing=2` (tiering promotion; 3 "
                "with NUMA balancing), or a DAMON migrate_hot scheme");
  }
  return Ok(kName, detail);
}

}  // namespace locus
