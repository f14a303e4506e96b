#include "policy/decide.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "policy/engine.h"

namespace locus {

Plan Decide(const Snapshot& snapshot, const v1::Policy& policy,
            const History& history) {
  namespace engine = decide_internal;
  Plan plan;
  const engine::Context ctx(snapshot, policy, history);
  if (int nodes = ctx.NodesWithCpus(); nodes < 2) {
    plan.notes.push_back(
        absl::StrCat(nodes, " NUMA node", nodes == 1 ? "" : "s",
                     " with CPUs: nothing to balance, every access is local"));
    return plan;
  }
  std::vector<engine::Worker> workers = engine::CollectWorkers(ctx);
  engine::AssignHomes(ctx, workers, plan);
  engine::Candidates candidates;
  engine::Tally tally;
  engine::AddSpills(ctx, workers, tally, plan);
  {
    engine::PinCandidates pins(ctx, workers, candidates, tally);
    engine::MemoryCandidates memory(ctx, workers.size(), candidates, tally);
    engine::Consumers consumers(ctx);
    for (size_t wi = 0; wi < workers.size(); ++wi) {
      pins.Add(workers[wi], static_cast<int>(wi));
      memory.Add(workers[wi], static_cast<int>(wi));
      consumers.Add(workers[wi]);
    }
    consumers.Finish(ctx);
    engine::AddIrqCandidates(ctx, consumers, candidates, tally, plan);
  }
  engine::Select(ctx, workers, candidates, tally, plan);
  engine::AddConnections(ctx, workers, plan);
  engine::AddNotes(ctx, tally, workers.size(), plan);
  if (policy.mode() == v1::Policy::MODE_DRY_RUN) {
    plan.notes.push_back("dry_run: plan reported, nothing applied");
  }
  return plan;
}

absl::flat_hash_map<int32_t, int> HomesOf(const Snapshot& snapshot,
                                          const v1::Policy& policy,
                                          const History& history) {
  namespace engine = decide_internal;
  absl::flat_hash_map<int32_t, int> homes;
  const engine::Context ctx(snapshot, policy, history);
  if (ctx.NodesWithCpus() < 2) return homes;
  std::vector<engine::Worker> workers = engine::CollectWorkers(ctx);
  Plan scratch;  // its notes and pins are Decide()'s to give
  engine::AssignHomes(ctx, workers, scratch);
  for (const engine::Worker& w : workers) {
    if (w.home >= 0) homes[w.pid] = ctx.Id(w.home);
  }
  return homes;
}

}  // namespace locus
