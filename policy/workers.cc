// The workers: the targets the policy selects, what their threads did this
// tick, where they are confined, and which node each would rather keep.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/types/span.h"
#include "policy/cpuset.h"
#include "policy/engine.h"

namespace locus::decide_internal {
namespace {

struct Claim {
  int node = -1;
  int rank = kLastCpu;
};

// Which targets the policy selects.
class Selection {
 public:
  explicit Selection(const v1::Targets& selected)
      : comms_(selected.comm().begin(), selected.comm().end()),
        workers_only_(selected.workers_only()) {}
  bool Selects(const Target& target) const {
    return comms_.contains(target.comm) &&
           (!workers_only_ || target.role == TargetRole::kWorker);
  }

 private:
  const absl::flat_hash_set<std::string> comms_;
  const bool workers_only_;
};

// Adds up the worker's threads; its runtime per node goes to `run`. Sums
// in locals over spans taken once per thread: the figures are inline vectors
// (a branch per element otherwise) and Worker's fields may alias them.
void SumThreads(const Context& ctx, Worker& w, std::vector<uint64_t>& run) {
  run.assign(ctx.nodes, 0);
  uint64_t total_run = 0, faults = 0, remote = 0, net_rx = 0, cross = 0;
  uint64_t wait = 0;
  const bool tiered = !ctx.lower_tier_ids.empty();
  for (const ThreadSample& thread : w.target->threads) {
    const absl::Span<const uint64_t> runtime = thread.runtime_ns;
    const size_t n_max = std::min<size_t>(ctx.nodes, runtime.size());
    for (size_t n = 0; n < n_max; ++n) {
      run[n] += runtime[n];
      total_run += runtime[n];
    }
    const absl::Span<const NodeFaults> node_faults = thread.faults;
    const size_t m_max = std::min<size_t>(ctx.nodes, node_faults.size());
    for (size_t m = 0; m < m_max; ++m) {
      faults += node_faults[m].local + node_faults[m].remote;
      remote += node_faults[m].remote;
    }
    // Taken back out only on a tiered host: no branch per node elsewhere.
    if (tiered) {
      for (size_t m = 0; m < m_max; ++m) {
        if (!ctx.lower_tier[m]) continue;
        faults -= node_faults[m].local + node_faults[m].remote;
        remote -= node_faults[m].remote;
      }
    }
    net_rx += thread.net_rx_softirq_ns;
    cross += thread.cross_node_migrations;
    wait += thread.wait_ns;
  }
  w.total_run += total_run;
  w.faults += faults;
  w.remote_faults += remote;
  w.net_rx_ns += net_rx;
  w.cross_node_migrations += cross;
  w.wait_ns += wait;
  const absl::Span<const uint64_t> pages = w.target->resident_pages;
  const size_t p_max = std::min<size_t>(ctx.nodes, pages.size());
  for (size_t n = 0; n < p_max; ++n) {
    (ctx.lower_tier[n] ? w.lower_tier_pages : w.total_pages) += pages[n];
  }
}

// Sets the node (and the one CPU) every thread is confined to, if any.
void FindConfinement(const Context& ctx, Worker& w) {
  int node = -1;
  int cpu = -2;  // -2: none seen yet
  if (w.target->threads.empty()) return;
  for (const ThreadSample& thread : w.target->threads) {
    int n = ctx.CommonNode(thread.allowed_cpus);
    if (n < 0 || (node >= 0 && n != node)) return;
    node = n;
    int single = thread.allowed_cpus.size() == 1 ? thread.allowed_cpus[0] : -1;
    cpu = (cpu == -2 || cpu == single) ? single : -1;
  }
  w.pinned = node;
  w.pinned_cpu = cpu >= 0 ? cpu : -1;
}

// The node index with the most of `amount`, the first of equals; -1 when
// none has any.
template <typename Amount>
int Most(int nodes, Amount amount) {
  int best = -1;
  uint64_t most = 0;
  for (int n = 0; n < nodes; ++n) {
    if (amount(n) > most) most = amount(n), best = n;
  }
  return best;
}

// The node the worker's history names as its home, while placement may
// still use it.
int HistoryNode(const Context& ctx, const Worker& w) {
  const EntityHistory* entry = ctx.history.Find({EntityKind::kTask, w.pid});
  int node = entry != nullptr ? ctx.NodeIndexOfId(entry->node) : -1;
  return node >= 0 && !ctx.worker_cpus[node].empty() ? node : -1;
}

// Only nodes its cgroup lets it both run on and keep its memory on
// (`home`) are claimed, except by a held worker, which stays put.
Claim Prefer(const Context& ctx, const Worker& w,
             const std::vector<uint64_t>& run, const std::vector<char>& home) {
  auto allowed = [&](int n) { return n >= 0 && home[n]; };
  if (w.held) {
    return {w.pinned >= 0 ? w.pinned
                          : Most(ctx.nodes, [&](int n) { return run[n]; }),
            kHeld};
  }
  const int run_node =
      Most(ctx.nodes, [&](int n) { return allowed(n) ? run[n] : 0; });
  const int mem_node = Most(
      ctx.nodes, [&](int n) { return ctx.lower_tier[n] ? 0 : w.PagesOn(n); });
  if (int node = HistoryNode(ctx, w); allowed(node)) return {node, kOurHome};
  if (allowed(w.pinned)) return {w.pinned, kPinned};
  // Moving a thread is cheap, moving its memory is not.
  if (allowed(mem_node) && 2 * w.PagesOn(mem_node) >= w.total_pages) {
    return {mem_node, kWhereItIs};
  }
  if (run_node >= 0) return {run_node, kWhereItIs};
  for (const ThreadSample& thread : w.target->threads) {
    if (int n = ctx.NodeOfCpu(thread.cpu); allowed(n)) return {n, kLastCpu};
  }
  return {};
}

// Fills in what the worker did this tick and where it would rather be.
void Describe(const Context& ctx, const Allowed& anywhere,
              std::vector<uint64_t>& run, Worker& w) {
  SumThreads(ctx, w, run);
  FindConfinement(ctx, w);
  const Standing standing = ctx.StandingOf({EntityKind::kTask, w.pid});
  w.held = standing.held;
  w.dwell_node = standing.dwell_node;
  // Most targets share `anywhere`: no vectors built per worker.
  Allowed own;
  w.has_cpuset = HasCpuset(*w.target);
  w.placed_by_others = PlacedByOthers(*w.target);
  if (w.has_cpuset) own = AllowedNodes(ctx, *w.target);
  const Claim claim = Prefer(ctx, w, run, (w.has_cpuset ? own : anywhere).home);
  w.pref = claim.node;
  w.rank = claim.rank;
  if (w.pref >= 0 && ctx.worker_cpus[w.pref].empty() && !w.held) w.pref = -1;
  if (w.pref >= 0) {
    w.on_pref = {.run = run[w.pref],
                 .faults = w.SumFaultsOn(w.pref),
                 .pages = w.SnapshotPagesOn(w.pref)};
  }
}

}  // namespace

// One pass over the snapshot's targets, in its order: on a big host every
// further pass over them misses the cache on each target again.
std::vector<Worker> CollectWorkers(const Context& ctx) {
  const Selection selection(ctx.policy.targets());
  std::vector<Worker> workers;
  workers.reserve(ctx.snapshot.targets.size());
  std::vector<uint64_t> run;  // scratch: one worker's runtime per node
  const Allowed anywhere = AllowedNodes(ctx, Target{});
  for (const Target& target : ctx.snapshot.targets) {
    if (!selection.Selects(target)) continue;
    Worker& w = workers.emplace_back(Worker{
        .target = &target, .pid = target.pid, .page_size = target.page_size});
    Describe(ctx, anywhere, run, w);
  }
  return workers;
}

}  // namespace locus::decide_internal
