// The soft home (placement.spill). A worker's home node may be saturated by
// load that is not Locus's to place (a backup job, a batch container): its
// connections that already exist cannot be steered away, and confined to
// its home it would share a CPU with the intruder while another node idles.
// When a node stays saturated for spill.sustain_s and its workers wait, the
// fewest of them needed are widened to their home plus the nearest node
// with spare CPU (never one as busy); when the load that is not theirs
// stays below the calm line as long, they are narrowed back. Each change is
// a pin with its reason; a worker changes at most once per spill.dwell_s.
// Their memory keeps its home meanwhile (memory.cc leaves them alone).
// These moves are not counted in max_moves_per_tick: they answer
// starvation, and are few by construction.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "policy/cpu_list.h"
#include "policy/cpuset.h"
#include "policy/engine.h"
#include "policy/pressure.h"

namespace locus::decide_internal {
namespace {

// The least relief a widened worker is counted for: one with no runtime
// at home this tick (asleep) still needs a place.
constexpr double kMinRelief = 0.05;

// The load a widened worker is expected to take off its home: its runtime
// there, or without the scheduler sensor (no runtime at all) the time it
// waited, which is what it would run elsewhere.
double Relief(const Worker& w, int n, double tick) {
  const double run = w.total_run > 0 ? w.RunOn(n) : w.wait_ns;
  return std::max(kMinRelief, run / tick);
}
// How much less busy than the saturated node a node must be to take its
// workers: busy shares move by a few points from tick to tick.
constexpr double kSpareMargin = 0.05;

struct SpillContext {
  const Context& ctx;
  const v1::Spill& spill;
  std::vector<NodePressure> pressure;
  uint64_t sustain_ns;
  uint64_t dwell_ns;
  Tally& tally;
  Plan& plan;
  // pin_to cpu: the CPU each narrowed worker goes back to.
  CpuChooser chooser;

  uint64_t now() const { return ctx.snapshot.now_ns; }
  double tick() const {
    return static_cast<double>(std::max<uint64_t>(ctx.snapshot.tick_ns, 1));
  }
  // The streaks History keeps for node index n; null when none.
  const NodePressureHistory* Streaks(int n) const {
    auto it = ctx.history.pressure.find(ctx.Id(n));
    return it == ctx.history.pressure.end() ? nullptr : &it->second;
  }
  bool Lasted(uint64_t since_ns) const {
    return since_ns != 0 && now() >= since_ns + sustain_ns;
  }
};

std::string WaitPerSecond(double share) {
  return absl::StrFormat("%.1f ms wait per second", 1000 * share);
}

std::string NodeList(const Context& ctx, int a, int b) {
  std::vector<int> ids = {ctx.Id(a), ctx.Id(b)};
  std::sort(ids.begin(), ids.end());
  return FormatCpuList(ids);
}

// One PinThread per thread of the worker: all of them are one change.
void AddWorkerPins(const SpillContext& sc, const Worker& w, int home,
                   std::vector<int> cpus, int spill_to,
                   const std::string& reason, int from_node, double gain) {
  for (const ThreadSample& thread : w.target->threads) {
    sc.plan.actions.push_back({
        .op = PinThread{.pid = ProcessOf(*w.target),
                        .tid = thread.tid,
                        .node = sc.ctx.Id(home),
                        .cpus = cpus,
                        .thread_worker = w.target->process != 0,
                        .spill_node = spill_to < 0 ? -1 : sc.ctx.Id(spill_to)},
        .reason = reason,
        .expected_gain = gain,
        .from_node = from_node,
    });
  }
}

// Back home: the node's CPUs, or with pin_to cpu the CPU the chooser gives
// (the fewest workers, then the least busy).
std::vector<int> HomeCpus(SpillContext& sc, const Worker& w) {
  const Context& ctx = sc.ctx;
  if (ctx.policy.placement().pin_to() == v1::Placement::PIN_TO_CPU) {
    if (int cpu = sc.chooser.Take(w.home, *w.target); cpu >= 0) return {cpu};
  }
  return CpusFor(ctx, *w.target, w.home);
}

// Why a widened worker goes back home now; empty: it stays widened.
std::string NarrowWhy(const SpillContext& sc, const Worker& w, int to,
                      const EntityHistory& entry) {
  const Context& ctx = sc.ctx;
  if (!sc.spill.enabled()) return "placement.spill is off";
  if (to < 0) return "the node it was widened to is gone";
  if (w.home != ctx.NodeIndexOfId(entry.node)) return "its home node changed";
  if (sc.now() < entry.spill_changed_ns + sc.dwell_ns) return "";
  const NodePressureHistory* streaks = sc.Streaks(w.home);
  if (streaks == nullptr || !sc.Lasted(streaks->calm_since_ns)) return "";
  const NodePressure& p = sc.pressure[w.home];
  return absl::StrCat("node ", ctx.Id(w.home), " at ", Pct(p.others()),
                      " busy from other tasks for ",
                      (sc.now() - streaks->calm_since_ns) / kNsPerSec, " s");
}

// A worker Locus widened earlier: kept widened, or narrowed back home.
void KeepOrNarrow(SpillContext& sc, Worker& w, const EntityHistory& entry) {
  const Context& ctx = sc.ctx;
  const int to = ctx.NodeIndexOfId(entry.spill_node);
  // A held-down worker is left as it is, widened too: what holds it down
  // was reverted, and it is not moved again before hold_down_s.
  const std::string why =
      w.home < 0 || w.held ? "" : NarrowWhy(sc, w, to, entry);
  if (why.empty()) {
    w.spill_node = to;
    ++sc.tally.spilled;
    return;
  }
  const std::vector<int> cpus = HomeCpus(sc, w);
  const std::string reason = absl::StrCat(
      why, ": ", WorkerName(*w.target), " narrowed back to node ",
      ctx.Id(w.home), " cpus ", FormatCpuList(cpus), " after ",
      (sc.now() - entry.spill_changed_ns) / kNsPerSec, " s widened");
  AddWorkerPins(sc, w, w.home, cpus, -1, reason, kSeveralNodes, 0);
  w.spill_acted = true;
}

// The nearest node with spare CPU for node index n's workers, the least
// busy of equals; -1 when none. Spare: busy below busy_above, and less busy
// than n by kSpareMargin at least (never a node as busy, whatever the
// noise). A widened worker competes there on the kernel's terms; the
// kernel's balancer, not Locus, shares that node's CPUs out.
int SpillTarget(const SpillContext& sc, int n) {
  const Context& ctx = sc.ctx;
  int best = -1;
  for (int m = 0; m < ctx.nodes; ++m) {
    const NodePressure& q = sc.pressure[m];
    if (m == n || ctx.worker_cpus[m].empty() || q.cpus == 0 || q.saturated ||
        q.busy >= sc.spill.busy_above() ||
        q.busy > sc.pressure[n].busy - kSpareMargin) {
      continue;
    }
    const int d = ctx.Distance(n, m);
    const int best_d = best < 0 ? 0 : ctx.Distance(n, best);
    if (best < 0 || d < best_d ||
        (d == best_d && q.busy < sc.pressure[best].busy)) {
      best = m;
    }
  }
  return best;
}

// Worker w, homed on n, may be widened now.
bool MayWiden(const SpillContext& sc, const Worker& w, int n) {
  const Context& ctx = sc.ctx;
  if (w.home != n || w.Spilled() || w.held || w.placed_by_others) return false;
  // Only a worker confined at home: one that runs anywhere already is the
  // pins' business, not the spill's.
  const bool confined =
      w.pinned == n || (w.pinned_cpu >= 0 && ctx.NodeOfCpu(w.pinned_cpu) == n);
  if (!confined || w.wait_ns / sc.tick() < sc.spill.wait_above()) return false;
  // Not within stability.dwell_s of its last move either (the pin home
  // that confined it included), nor within spill.dwell_s of its last
  // widening or narrowing.
  const EntityHistory* entry = ctx.history.Find({EntityKind::kTask, w.pid});
  return entry == nullptr ||
         (sc.now() >= entry->last_move_ns + ctx.dwell_ns &&
          (entry->spill_changed_ns == 0 ||
           sc.now() >= entry->spill_changed_ns + sc.dwell_ns));
}

// A worker of node n was widened less than sustain_s ago: the node's
// figures do not show its effect yet.
bool RecentlyWidened(const SpillContext& sc, const std::vector<Worker>& workers,
                     int n) {
  for (const Worker& w : workers) {
    if (w.home != n || w.spill_node < 0) continue;
    const EntityHistory* entry =
        sc.ctx.history.Find({EntityKind::kTask, w.pid});
    if (entry != nullptr &&
        sc.now() < entry->spill_changed_ns + sc.sustain_ns) {
      return true;
    }
  }
  return false;
}

// False when its cgroup keeps it off node m's CPUs.
bool Widen(SpillContext& sc, Worker& w, int n, int m) {
  const Context& ctx = sc.ctx;
  const NodePressure& p = sc.pressure[n];
  const std::vector<int> spare = CpusFor(ctx, *w.target, m);
  if (spare.empty()) return false;
  std::vector<int> cpus = CpusFor(ctx, *w.target, n);
  cpus.insert(cpus.end(), spare.begin(), spare.end());
  std::sort(cpus.begin(), cpus.end());
  const double wait = w.wait_ns / sc.tick();
  const std::string reason = absl::StrCat(
      "node ", ctx.Id(n), " at ", Pct(p.busy), " busy, ", WaitPerSecond(wait),
      " for ", WorkerName(*w.target), ": widened to nodes ",
      NodeList(ctx, n, m), " (node ", ctx.Id(m), " at ",
      Pct(sc.pressure[m].busy), " busy) for at least ", sc.spill.dwell_s(),
      " s; its memory stays on node ", ctx.Id(n));
  AddWorkerPins(sc, w, n, cpus, m, reason, ctx.Id(n), std::min(1.0, wait));
  w.spill_node = m;
  w.spill_acted = true;
  ++sc.tally.spilled;
  return true;
}

// Node index n has been saturated for sustain_s: its waiting workers, the
// longest waits first, until their runtime there covers the load above the
// calm line or the target's spare CPU is taken.
void WidenNode(SpillContext& sc, std::vector<Worker>& workers, int n) {
  const NodePressureHistory* streaks = sc.Streaks(n);
  if (streaks == nullptr || !sc.Lasted(streaks->saturated_since_ns) ||
      RecentlyWidened(sc, workers, n)) {
    return;
  }
  std::vector<Worker*> waiting;
  for (Worker& w : workers) {
    if (MayWiden(sc, w, n)) waiting.push_back(&w);
  }
  if (waiting.empty()) return;
  const int m = SpillTarget(sc, n);
  const NodePressure& p = sc.pressure[n];
  if (m < 0) {
    // Without its figures, which change every tick: the loop logs a note
    // only when it changes (they are in `top` and the metrics).
    sc.plan.notes.push_back(absl::StrCat(
        "node ", sc.ctx.Id(n),
        " saturated: no node with spare CPU to widen its waiting workers to"));
    return;
  }
  std::sort(waiting.begin(), waiting.end(),
            [](const Worker* a, const Worker* b) {
              return a->wait_ns != b->wait_ns ? a->wait_ns > b->wait_ns
                                              : a->pid < b->pid;
            });
  const double calm_line = sc.spill.busy_above() - kSpillCalmBand;
  const double need = (p.busy - calm_line) * p.cpus;
  const double room =
      (sc.spill.busy_above() - sc.pressure[m].busy) * sc.pressure[m].cpus;
  double relief = 0;
  for (Worker* w : waiting) {
    if (relief >= need || relief >= room) break;
    if (!Widen(sc, *w, n, m)) continue;
    relief += Relief(*w, n, sc.tick());
  }
}

}  // namespace

void AddSpills(const Context& ctx, std::vector<Worker>& workers, Tally& tally,
               Plan& plan) {
  if (!ctx.policy.placement().enabled()) return;
  const v1::Spill& spill = ctx.policy.placement().spill();
  SpillContext sc{.ctx = ctx,
                  .spill = spill,
                  .pressure = MeasurePressure(ctx.snapshot, spill),
                  .sustain_ns = uint64_t{spill.sustain_s()} * kNsPerSec,
                  .dwell_ns = uint64_t{spill.dwell_s()} * kNsPerSec,
                  .tally = tally,
                  .plan = plan,
                  .chooser = CpuChooser(ctx, workers)};
  for (Worker& w : workers) {
    const EntityHistory* entry = ctx.history.Find({EntityKind::kTask, w.pid});
    if (entry != nullptr && entry->spill_node >= 0) KeepOrNarrow(sc, w, *entry);
  }
  if (!spill.enabled()) return;
  for (int n = 0; n < ctx.nodes; ++n) WidenNode(sc, workers, n);
}

}  // namespace locus::decide_internal
