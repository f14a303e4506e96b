// Selection: the candidates with the most gain, within max_moves_per_tick,
// become the plan's actions.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "policy/cpu_list.h"
#include "policy/cpuset.h"
#include "policy/engine.h"

namespace locus::decide_internal {
namespace {

// The first `count` by gain, then kind and id: (kind, id) is unique, so the
// order is total and the plan deterministic. Only the moves the limit lets
// through are put in order (the rest are all deferred): a full sort of a big
// host's candidates would be the one step that grows faster than the host.
void SortBestFirst(std::vector<Candidate>& moves, size_t count) {
  std::partial_sort(moves.begin(), moves.begin() + count, moves.end(),
                    [](const Candidate& a, const Candidate& b) {
                      if (a.gain != b.gain) return a.gain > b.gain;
                      if (a.kind != b.kind) return a.kind < b.kind;
                      return a.id < b.id;
                    });
}

int FromId(const Context& ctx, const Candidate& c) {
  return c.from >= 0 ? ctx.Id(c.from) : -1;
}

// Why the worker is pinned: where it ran, its remote faults and
// migrations, where it goes and the gain expected.
std::string PinReason(const Context& ctx, const Worker& w, const Candidate& c) {
  const double tick_s = std::max<uint64_t>(ctx.snapshot.tick_ns, 1) / 1e9;
  std::string reason = absl::StrCat(WorkerName(*w.target), " ");
  if (w.pinned >= 0) {
    absl::StrAppend(&reason, "pinned to node ", ctx.Id(w.pinned));
  } else {
    absl::StrAppend(&reason, Pct(c.run_off), " of runtime off node ",
                    ctx.Id(c.node));
  }
  if (c.remote >= 0) {
    absl::StrAppend(&reason, ", ", Pct(c.remote), " remote faults");
  }
  absl::StrAppend(
      &reason, ", ", absl::StrFormat("%.0f", w.cross_node_migrations / tick_s),
      " cross-node migrations/s -> pin to node ", ctx.Id(c.node),
      c.cpu >= 0 ? absl::StrCat(" cpu ", c.cpu)
                 : absl::StrCat(" cpus ",
                                FormatCpuList(CpusFor(ctx, *w.target, c.node))),
      " (expected gain ", Pct(c.gain), ")");
  if (std::string constraint = HomeConstraint(ctx, *w.target, c.node);
      !constraint.empty()) {
    absl::StrAppend(&reason, "; ", constraint);
  }
  return reason;
}

// One PinThread per thread of the worker: all of them are one move.
void AddPins(const Context& ctx, const Worker& w, const Candidate& c,
             std::vector<Action>& pins) {
  // Only CPUs its cgroup allows: the kernel refuses any other.
  const std::vector<int> cpus =
      c.cpu >= 0 ? std::vector<int>{c.cpu} : CpusFor(ctx, *w.target, c.node);
  const std::string reason = PinReason(ctx, w, c);
  for (const ThreadSample& thread : w.target->threads) {
    pins.push_back({
        .op = PinThread{.pid = ProcessOf(*w.target),
                        .tid = thread.tid,
                        .node = ctx.Id(c.node),
                        .cpus = cpus,
                        .thread_worker = w.target->process != 0},
        .reason = reason,
        .expected_gain = c.gain,
        .from_node = FromId(ctx, c),
    });
  }
}

Action IrqMove(const Context& ctx, const Candidate& c, std::string reason) {
  return {
      .op = SetIrqAffinity{.irq = ctx.snapshot.irqs[c.index].irq,
                           .cpus = {c.cpu}},
      .reason = std::move(reason),
      .expected_gain = c.gain,
      .from_node = FromId(ctx, c),
  };
}

}  // namespace

void Select(const Context& ctx, const std::vector<Worker>& workers,
            Candidates& candidates, Tally& tally, Plan& plan) {
  MoveLimit limit(
      static_cast<int>(ctx.policy.stability().max_moves_per_tick()));
  SortBestFirst(candidates.moves,
                std::min<size_t>(candidates.moves.size(), limit.Left()));
  std::vector<bool> pinned_now(workers.size(), false);
  std::vector<Action> pins, irqs;
  for (const Candidate& c : candidates.moves) {
    if (!limit.Take(tally)) continue;
    if (c.kind == CandidateKind::kPin) {
      pinned_now[c.index] = true;
      AddPins(ctx, workers[c.index], c, pins);
    } else {
      irqs.push_back(
          IrqMove(ctx, c, std::move(candidates.irq_reasons[c.irq_reason])));
    }
  }
  std::vector<Action> migrations =
      TakeMigrations(ctx, workers, candidates.memory, pinned_now, limit, tally);
  // Threads first so memory moves towards where they already run.
  for (auto* list : {&pins, &migrations, &irqs}) {
    for (Action& a : *list) plan.actions.push_back(std::move(a));
  }
}

}  // namespace locus::decide_internal
