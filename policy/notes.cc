// The plan's notes: why it is what it is when the actions do not say.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "policy/cpuset.h"
#include "policy/engine.h"

namespace locus::decide_internal {
namespace {

// Moves the limits put off to a later tick.
void AddDeferredNotes(const Context& ctx, const Tally& tally, Plan& plan) {
  const v1::Policy& policy = ctx.policy;
  if (tally.deferred > 0) {
    plan.notes.push_back(absl::StrCat(
        tally.deferred, " move(s) deferred: max_moves_per_tick=",
        static_cast<int>(policy.stability().max_moves_per_tick())));
  }
  if (tally.budget_deferred > 0) {
    plan.notes.push_back(absl::StrCat(
        tally.budget_deferred, " page migration(s) deferred: budget of ",
        MiB(tally.budget_bytes), " this tick spent"));
  }
  for (int n : tally.full_nodes) {
    plan.notes.push_back(absl::StrCat("node ", ctx.Id(n),
                                      " full: free memory at its ",
                                      policy.memory().reserve_free_pct(),
                                      "% reserve, pages not moved there"));
  }
}

// Entities that History keeps where they are.
void AddStabilityNotes(const Context& ctx, const Tally& tally, Plan& plan) {
  const v1::Stability& stability = ctx.policy.stability();
  if (tally.dwelling > 0) {
    plan.notes.push_back(absl::StrCat(tally.dwelling,
                                      " entity(ies) within dwell time (",
                                      stability.dwell_s(), " s), not moved"));
  }
  if (tally.held > 0) {
    plan.notes.push_back(
        absl::StrCat(tally.held, " entity(ies) held down after a revert"));
  }
  if (tally.returning > 0) {
    plan.notes.push_back(
        absl::StrCat(tally.returning,
                     " entity(ies) not moved back to the node we took them "
                     "from less than hold_down_s (",
                     stability.hold_down_s(), " s) ago"));
  }
}

// The selected workers whose placement is someone else's (placed_by).
int CountPlacedByOthers(const Context& ctx) {
  const v1::Targets& selected = ctx.policy.targets();
  int placed = 0;
  for (const Target& target : ctx.snapshot.targets) {
    if (!PlacedByOthers(target)) continue;
    if (selected.workers_only() && target.role != TargetRole::kWorker) {
      continue;
    }
    if (std::find(selected.comm().begin(), selected.comm().end(),
                  target.comm) != selected.comm().end()) {
      ++placed;
    }
  }
  return placed;
}

}  // namespace

void AddNotes(const Context& ctx, const Tally& tally, size_t workers,
              Plan& plan) {
  AddDeferredNotes(ctx, tally, plan);
  AddStabilityNotes(ctx, tally, plan);
  if (tally.spilled > 0) {
    plan.notes.push_back(absl::StrCat(
        tally.spilled,
        " worker(s) widened beyond a saturated home node (soft home); their "
        "memory stays home"));
  }
  if (tally.lower_tier_bytes > 0) {
    const std::vector<int>& nodes = ctx.lower_tier_ids;
    plan.notes.push_back(absl::StrCat(
        MiB(tally.lower_tier_bytes),
        " of the workers' memory on nodes without CPUs (node",
        nodes.size() == 1 ? " " : "s ", absl::StrJoin(nodes, ","),
        ") left where it is: the kernel's tiering or a binding placed it"));
  }
  if (plan.actions.empty()) {
    // Workers someone else places have no home of ours: said apart, so
    // that "N of M on their home node" counts only what Locus placed.
    const int placed = CountPlacedByOthers(ctx);
    plan.notes.push_back(absl::StrCat(
        "converged: ", tally.converged, " of ", workers - placed,
        " workers on their home node, ",
        placed > 0 ? absl::StrCat(placed, " placed by the kubelet, ") : "",
        tally.irqs_in_place, " NIC IRQs with their consumers, ",
        tally.below_gain, " possible move(s) below min_gain ",
        Pct(ctx.min_gain)));
  }
}

}  // namespace locus::decide_internal
