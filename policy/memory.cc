// Memory follows threads: a worker on its home node whose faults (or, with
// too few faults, pages) are mostly elsewhere gets its pages moved home,
// within the tick's budget and the home node's free-memory reserve.
// "Elsewhere" is another node with CPUs: the pages on a node without CPUs
// (a lower memory tier's) are left where the kernel or a binding put them.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "policy/cpuset.h"
#include "policy/engine.h"

namespace locus::decide_internal {
namespace {

constexpr uint64_t kNoCap = std::numeric_limits<uint64_t>::max();

// A pass that just found nothing movable would find nothing again: the
// pages counted off home are shared or file pages (seen with nginx workers,
// whose libraries sit on the node that first read them).
bool RecentlySettled(const Context& ctx, const EntityHistory* entry) {
  return entry != nullptr && entry->settled() &&
         ctx.snapshot.now_ns < entry->settled_ns + ctx.dwell_ns;
}

// How much of the worker's memory is off its home: by its faults when it
// has enough of them, else by its pages.
MemoryCandidate OffHome(const Context& ctx, const Worker& w, int wi,
                        bool finishing) {
  const v1::Memory& memory = ctx.policy.memory();
  const uint64_t faults = w.faults;
  const uint64_t off_home = faults - w.FaultsOn(w.home);
  const uint64_t pages_off = w.total_pages - w.PagesOn(w.home);
  bool by_faults = !finishing && faults > 0 && faults >= memory.min_faults();
  // A fault counts on the node its page is on afterwards, and NUMA
  // balancing migrates on the fault itself: a worker confined to its home
  // whose pages AutoNUMA is moving there shows remote faults on home
  // memory. Faults that contradict themselves so say nothing about where
  // the rest of its memory is; its pages do.
  if (by_faults && w.pinned == w.home &&
      double(w.remote_faults) / faults >= memory.remote_threshold() &&
      double(off_home) / faults < memory.remote_threshold()) {
    by_faults = false;
  }
  return {
      .worker = wi,
      .pid = w.pid,
      .home = w.home,
      .page_size = w.page_size,
      .confined_home = w.pinned == w.home || w.PinnedHomeByUs(),
      .gain = by_faults ? double(off_home) / faults
                        : double(pages_off) / w.total_pages,
      .bytes = pages_off * w.page_size,
      .faults = by_faults ? faults : 0,
      .off_home = off_home,
      .finishing = finishing,
  };
}

// Free memory above each node's reserve; kNoCap where the size is unknown.
std::vector<uint64_t> Room(const Context& ctx) {
  std::vector<uint64_t> room(ctx.nodes, kNoCap);
  for (int n = 0; n < ctx.nodes; ++n) {
    const Node& node = ctx.snapshot.topology.nodes[n];
    if (node.mem_total_bytes == 0) continue;
    uint64_t reserve =
        node.mem_total_bytes / 100 * ctx.policy.memory().reserve_free_pct();
    room[n] = node.mem_free_bytes > reserve ? node.mem_free_bytes - reserve : 0;
  }
  return room;
}

// Nothing of `m` fits: its home is full (noted once per node), or the
// budget is spent.
void CountStuck(const MemoryCandidate& m, int home, bool full, Tally& tally) {
  if (full && m.bytes > 0) {
    if (std::find(tally.full_nodes.begin(), tally.full_nodes.end(), home) ==
        tally.full_nodes.end()) {
      tally.full_nodes.push_back(home);
    }
  } else {
    ++tally.budget_deferred;
  }
}

// "; home node 0: cpuset.mems allows only 0" when the cgroup decided.
std::string Constraint(const Context& ctx, const Worker& w) {
  std::string constraint = HomeConstraint(ctx, *w.target, w.home);
  return constraint.empty() ? "" : absl::StrCat("; ", constraint);
}

// "; 12.0 MiB on node 2 without CPUs left where it is" where it has some.
std::string LowerTierNote(const Context& ctx, const Worker& w) {
  if (w.lower_tier_pages == 0) return "";
  std::vector<std::string> nodes;
  for (int n = 0; n < ctx.nodes; ++n) {
    if (ctx.lower_tier[n] && w.PagesOn(n) > 0) {
      nodes.push_back(absl::StrCat(ctx.Id(n)));
    }
  }
  return absl::StrCat("; ", MiB(w.lower_tier_pages * w.page_size), " on node",
                      nodes.size() == 1 ? " " : "s ", absl::StrJoin(nodes, ","),
                      " without CPUs left where it is");
}

Action Migration(const Context& ctx, const Worker& w, const MemoryCandidate& m,
                 uint64_t bytes) {
  const int home = ctx.Id(w.home);
  std::string basis =
      m.faults > 0  ? absl::StrCat(Pct(m.gain), " of NUMA faults (", m.off_home,
                                   " of ", m.faults, ")")
      : m.finishing ? absl::StrCat("migration under way, ", Pct(m.gain),
                                   " of resident pages still")
                    : absl::StrCat(Pct(m.gain), " of resident pages");
  return {
      .op = MigratePages{.pid = w.target->pid,
                         .to_node = home,
                         .max_bytes = bytes,
                         .leave_nodes = ctx.lower_tier_ids},
      .reason = absl::StrCat(
          "worker ", w.target->pid, " (", w.target->comm, ") ", basis,
          " off home node ", home, " -> migrate ", MiB(bytes), " of ",
          MiB(m.bytes), " to node ", home, " (budget ",
          ctx.policy.memory().budget_mb_per_s(), " MiB/s, expected gain ",
          Pct(m.gain), ")", Constraint(ctx, w), LowerTierNote(ctx, w)),
      .expected_gain = m.gain,
  };
}

}  // namespace

MemoryCandidates::MemoryCandidates(const Context& ctx, size_t workers,
                                   Candidates& out, Tally& tally)
    : ctx_(ctx),
      out_(out),
      tally_(tally),
      enabled_(ctx.policy.memory().enabled() &&
               ctx.policy.placement().enabled()) {
  if (enabled_) out.memory.reserve(workers);
}

void MemoryCandidates::Add(const Worker& w, int wi) {
  // A worker widened beyond its home keeps its memory there: it is back
  // home when the pressure falls, and pages moved meanwhile would follow
  // a CPU it only borrows.
  // A thread worker's pages are its process's, used by its other threads
  // from their own nodes: none is moved for one thread.
  if (!enabled_ || w.target->process != 0) return;
  tally_.lower_tier_bytes += w.lower_tier_pages * w.page_size;
  if (w.home < 0 || w.total_pages == 0 || w.Spilled()) return;
  // The kernel refuses a page move to a node outside cpuset.mems.
  if (w.has_cpuset && !MemAllowed(ctx_, *w.target, w.home)) return;
  const EntityKey key{EntityKind::kMemory, w.pid};
  const Standing standing = ctx_.StandingOf(key);
  if (standing.held || w.held) return;
  if (standing.dwell_node >= 0 && standing.dwell_node != w.home) {
    ++tally_.dwelling;
    return;
  }
  if (w.PagesOn(w.home) == w.total_pages) return;
  const EntityHistory* entry = ctx_.history.Find(key);
  if (RecentlySettled(ctx_, entry)) {
    ++tally_.dwelling;
    return;
  }
  // The threshold starts a migration; it does not stop one half way. Pages
  // moved home within the dwell time, whose last pass still found pages
  // to move, keep following until a pass finds none (RecordSettled).
  const bool finishing =
      standing.dwell_node == w.home && entry != nullptr && !entry->settled();
  const MemoryCandidate m = OffHome(ctx_, w, wi, finishing);
  const v1::Memory& memory = ctx_.policy.memory();
  if (!finishing &&
      (m.gain < memory.remote_threshold() || m.gain < ctx_.min_gain)) {
    return;
  }
  out_.memory.push_back(m);
}

std::vector<Action> TakeMigrations(const Context& ctx,
                                   const std::vector<Worker>& workers,
                                   std::vector<MemoryCandidate>& memory,
                                   const std::vector<bool>& pinned_now,
                                   MoveLimit& limit, Tally& tally) {
  const double tick_s = ctx.snapshot.tick_ns / 1e9;
  uint64_t budget = static_cast<uint64_t>(
      ctx.policy.memory().budget_mb_per_s() * kMiB * tick_s);
  tally.budget_bytes = budget;
  std::vector<uint64_t> room = Room(ctx);
  std::vector<Action> migrations;
  auto take = [&](const MemoryCandidate& m) {
    // Memory follows threads: only workers already confined to their home
    // or pinned there in this plan.
    if (!m.confined_home && !pinned_now[m.worker]) return;
    const uint64_t page = std::max<uint64_t>(m.page_size, 1);
    uint64_t bytes = std::min({m.bytes, budget, room[m.home]});
    bytes -= bytes % page;
    if (bytes == 0) {
      CountStuck(m, m.home, room[m.home] < page, tally);
      return;
    }
    if (!limit.Take(tally)) return;
    budget -= bytes;
    if (room[m.home] != kNoCap) room[m.home] -= bytes;
    migrations.push_back(Migration(ctx, workers[m.worker], m, bytes));
  };
  // Best first (by gain, then pid: a total order) while the budget and the
  // move limit last; once either is spent, the rest are only counted (stuck
  // or deferred), in any order. A heap orders only those taken: a full sort
  // of a big host's candidates would grow faster than the host.
  auto worse = [](const MemoryCandidate& a, const MemoryCandidate& b) {
    return b.gain > a.gain || (b.gain == a.gain && b.pid < a.pid);
  };
  std::make_heap(memory.begin(), memory.end(), worse);
  auto heap_end = memory.end();
  while (heap_end != memory.begin() && budget > 0 && limit.Left() > 0) {
    std::pop_heap(memory.begin(), heap_end, worse);
    --heap_end;
    take(*heap_end);
  }
  std::for_each(memory.begin(), heap_end, take);
  // Noted in node order, whichever candidate found each full.
  std::sort(tally.full_nodes.begin(), tally.full_nodes.end());
  return migrations;
}

}  // namespace locus::decide_internal
