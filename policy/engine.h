// Inside Decide(): what its steps share. Internal to locus_policy; the one
// public entry point is policy/decide.h, which runs the steps in order. Each
// step lives in the file of its domain:
//   engine.cc     the Context (node and CPU indices), built once per call
//   workers.cc    which targets are workers, where they run and would stay
//   placement.cc  each node's quota, a home node per worker, pins to it
//   spill.cc      the soft home: widening beyond a saturated home and back
//   memory.cc     pages that should follow their worker home
//   irqs.cc       NIC queue IRQs that should follow their consumers
//   select.cc     the best candidates within max_moves_per_tick, as actions
//   connections.cc which node's new connections each worker's socket takes
//   notes.cc      why the plan is what it is
#ifndef LOCUS_POLICY_ENGINE_H_
#define LOCUS_POLICY_ENGINE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "locus/v1/policy.pb.h"
#include "policy/history.h"
#include "policy/plan.h"
#include "policy/snapshot.h"

namespace locus::decide_internal {

inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr uint64_t kNsPerSec = 1'000'000'000;

// Numbers as reasons and notes show them: "82%", "41 MiB", "3.2 ms".
std::string Pct(double share);
std::string MiB(uint64_t bytes);
std::string Ms(uint64_t ns);
// A worker as reasons name it: "worker 1234 (nginx)", or for a thread
// worker "worker thread 1236 (haproxy 1234)".
std::string WorkerName(const Target& target);

// What History says about an entity this tick.
struct Standing {
  bool held = false;    // held down after a revert
  int dwell_node = -1;  // node index it must stay on (moved within dwell)
};

// The inputs of one Decide() call and the indices built from them once.
// Nodes are named by their index in Topology::nodes, except in the plan.
struct Context {
  Context(const Snapshot& snapshot, const v1::Policy& policy,
          const History& history);

  int NodeOfCpu(int cpu) const;
  int NodeIndexOfId(int id) const;
  int Id(int index) const { return snapshot.topology.nodes[index].id; }
  int Distance(int from, int to) const;
  // The node index all of `cpus` are on; -1 when none, several or unknown.
  int CommonNode(const std::vector<int>& cpus) const;
  // Nodes with at least one CPU that cpu_node agrees on.
  int NodesWithCpus() const;
  Standing StandingOf(EntityKey key) const;
  // Moving the entity to node index `to` would take it straight back to the
  // node our last move took it from, less than hold_down_s ago. A signal that
  // flips (NET_RX charged to whichever worker shares the IRQ's CPUs, a
  // consumer split that ties) would otherwise move it back and forth, one
  // dwell apart; a move that was wrong is for the verifier to revert.
  bool WouldReturn(EntityKey key, int to) const;

  const Snapshot& snapshot;
  const v1::Policy& policy;
  const History& history;
  const int nodes;
  const uint64_t dwell_ns;
  const uint64_t hold_ns;
  const double min_gain;
  std::vector<int> index_of_id;               // node id -> index, or -1
  std::vector<int> cpu_index;                 // cpu -> node index, or -1
  std::vector<std::vector<int>> worker_cpus;  // per node: placement.cpus
  std::vector<std::vector<int>> irq_cpus;     // per node: irqs.cpus
  // Per node: 1 for one below the nodes with CPUs (policy/tiers.h: those
  // without CPUs, a lower memory tier's among them). A worker's
  // locality is judged over the other nodes: pages and faults there are
  // the kernel's to manage, not remote memory to pull home.
  std::vector<char> lower_tier;
  // The node ids of `lower_tier`, which every page move leaves alone.
  std::vector<int> lower_tier_ids;
};

// How strongly a worker holds the node it prefers; stronger claims are
// served first when nodes have fewer places than claims.
enum Rank : int {
  kLastCpu = 0,    // only where it last ran
  kWhereItIs = 1,  // where its memory or most of its runtime is
  kPinned = 2,     // confined there, by whoever
  kOurHome = 3,    // the home we gave it
  kHeld = 4,       // held down after a revert: it stays where it is
};

struct Worker {
  const Target* target = nullptr;
  int32_t pid = 0;      // the target's, copied: see `on_pref`
  int pinned = -1;      // node index every thread is confined to, or -1
  int pinned_cpu = -1;  // the one CPU every thread is confined to, or -1
  int pref = -1;        // node index it would rather keep
  int rank = kLastCpu;  // how strongly it holds `pref`
  int home = -1;        // node index chosen this tick
  uint64_t total_run = 0;
  uint64_t total_pages = 0;  // see `faults`
  uint64_t net_rx_ns = 0;
  uint64_t cross_node_migrations = 0;
  // Resident pages, NUMA faults and the faults' remote share over the
  // nodes with CPUs (all nodes on a host without memory-only nodes).
  uint64_t faults = 0;
  uint64_t remote_faults = 0;     // of which the faulting CPU was elsewhere
  uint64_t lower_tier_pages = 0;  // pages on the nodes below (lower_tier)
  uint64_t page_size = 0;         // the target's, copied: see `on_pref`
  bool held = false;
  // The target's HasCpuset() and PlacedByOthers(), copied: see `on_pref`.
  bool has_cpuset = false;
  bool placed_by_others = false;
  int dwell_node = -1;   // node it must stay on (moved within dwell), or -1
  uint64_t wait_ns = 0;  // run-queue wait over the tick, all threads
  // The soft home (spill.cc): the node index it is widened to once this
  // plan is applied, or -1; and whether this plan widens or narrows it.
  // The pins and the page moves leave such a worker alone.
  int spill_node = -1;
  bool spill_acted = false;
  bool Spilled() const { return spill_node >= 0 || spill_acted; }
  // Runtime, faults and pages on `pref`, summed while CollectWorkers has the
  // target's samples in cache. Most workers' home is `pref`; the samples are
  // a few small vectors per thread, scattered over the heap, so on a big
  // host every later look into them is a cache miss per vector.
  struct NodeSums {
    uint64_t run = 0;
    uint64_t faults = 0;
    uint64_t pages = 0;
  };
  NodeSums on_pref = {};

  // Runtime on node n. Summed again for a node other than `pref` rather than
  // stored per worker and node: on a big host that table costs more (fresh
  // pages every tick) than the few sums.
  uint64_t RunOn(int n) const {
    return n >= 0 && n == pref ? on_pref.run : SumRunOn(n);
  }
  // Faults on memory of node n (local and remote).
  uint64_t FaultsOn(int n) const {
    return n >= 0 && n == pref ? on_pref.faults : SumFaultsOn(n);
  }
  uint64_t PagesOn(int n) const {
    return n >= 0 && n == pref ? on_pref.pages : SnapshotPagesOn(n);
  }
  // The same from the snapshot's samples.
  uint64_t SumRunOn(int n) const;
  uint64_t SumFaultsOn(int n) const;
  uint64_t SnapshotPagesOn(int n) const;
  // We pinned it to its home within its dwell. The host model is refreshed
  // on its own thread, so a snapshot may predate the pin and still show the
  // worker where it was: it is home all the same, and pinning it again would
  // be a second move of the same worker.
  bool PinnedHomeByUs() const {
    return !held && dwell_node >= 0 && dwell_node == home;
  }
};

enum class CandidateKind { kPin = 0, kIrq = 1 };

// A possible move. Candidates are many on a big host and few are chosen, so
// they hold numbers; reasons are written only for the chosen.
struct Candidate {
  CandidateKind kind = CandidateKind::kPin;
  int index = -1;  // worker index, or IRQ index in the snapshot
  double gain = 0;
  int32_t id = 0;       // pid or IRQ number, for a deterministic order
  int node = -1;        // target node index
  int cpu = -1;         // the one CPU; -1 for a pin to all of the node's CPUs
  double run_off = 0;   // pin: share of runtime off the node
  double remote = -1;   // pin: share of faults remote; -1: no faults
  int irq_reason = -1;  // index in Candidates::irq_reasons (IRQs are few)
  int from = -1;        // node index it leaves; -1: several or unknown
};

// Carries what selection asks of its worker, so that sorting and walking
// the candidates by gain does not jump about the workers.
struct MemoryCandidate {
  int worker = -1;
  int32_t pid = 0;
  int home = -1;               // the worker's home node index
  uint64_t page_size = 0;      // the worker's
  bool confined_home = false;  // the worker is kept to its home already
  double gain = 0;
  uint64_t bytes = 0;
  uint64_t faults = 0;     // judged on faults when > 0, else on pages
  uint64_t off_home = 0;   // faults off the home node
  bool finishing = false;  // a migration under way, carried on below threshold
};

struct Candidates {
  std::vector<Candidate> moves;  // pins and IRQs
  std::vector<std::string> irq_reasons;
  std::vector<MemoryCandidate> memory;
};

// Why entities did not move, for the plan's notes.
struct Tally {
  int converged = 0;            // workers already home
  int irqs_in_place = 0;        // NIC IRQs already with their consumers
  int dwelling = 0;             // moved within dwell_s
  int held = 0;                 // held down after a revert
  int returning = 0;            // would go straight back within hold_down_s
  int below_gain = 0;           // would gain less than min_gain
  int spilled = 0;              // widened beyond a saturated home node
  int deferred = 0;             // past max_moves_per_tick
  int budget_deferred = 0;      // page migrations past this tick's budget
  uint64_t budget_bytes = 0;    // this tick's page-migration budget
  std::vector<int> full_nodes;  // node indices at their free-memory reserve
  // Workers' memory on nodes without CPUs, left where it is.
  uint64_t lower_tier_bytes = 0;
};

// max_moves_per_tick, shared by threads, IRQs and pages.
class MoveLimit {
 public:
  explicit MoveLimit(int max) : max_(max) {}
  // Counts one more move; past the limit counts it deferred instead.
  bool Take(Tally& tally);
  // How many more Take() would grant.
  int Left() const { return max_ > taken_ ? max_ - taken_ : 0; }

 private:
  int max_;
  int taken_ = 0;
};

// Where NIC IRQs' consumers are, per node index: their workers' NET_RX
// softirq time, else how many workers there are.
struct Consumers {
  explicit Consumers(const Context& ctx)
      : net_rx(ctx.nodes, 0), count(ctx.nodes, 0) {}
  void Add(const Worker& w);
  // After the last Add: a node without CPUs for IRQs has no consumers.
  void Finish(const Context& ctx);
  double Share(int n) const { return weight[n] / weight_total; }

  std::vector<double> net_rx;
  std::vector<double> count;
  double net_rx_total = 0;
  std::vector<double> weight;  // net_rx when there is any, else count
  double weight_total = 0;
};

// pin_to cpu: a CPU of a node for one more worker, the one with the fewest
// workers (those already on one CPU of their home counted), then the least
// busy (placement.cc). Placement's pins home and the soft home's narrowing
// take from one chooser each tick.
class CpuChooser {
 public:
  CpuChooser(const Context& ctx, const std::vector<Worker>& workers);
  // A CPU of `node` its cgroup allows `target`; -1 when it has none.
  int Take(int node, const Target& target);

 private:
  double Busy(int cpu) const;

  const Context& ctx_;
  std::vector<int> load_;  // workers per CPU
};

// Pins that take a worker home (placement.cc).
class PinCandidates {
 public:
  PinCandidates(const Context& ctx, const std::vector<Worker>& workers,
                Candidates& out, Tally& tally);
  ~PinCandidates();
  void Add(const Worker& w, int wi);

 private:
  const Context& ctx_;
  Candidates& out_;
  Tally& tally_;
  const bool enabled_;
  const bool per_cpu_;
  std::unique_ptr<CpuChooser> chooser_;  // pin_to cpu only
};

// Page moves that take a worker's memory home (memory.cc).
class MemoryCandidates {
 public:
  MemoryCandidates(const Context& ctx, size_t workers, Candidates& out,
                   Tally& tally);
  void Add(const Worker& w, int wi);

 private:
  const Context& ctx_;
  Candidates& out_;
  Tally& tally_;
  const bool enabled_;
};

// The steps, in the order Decide() runs them. Once homes are set, each
// worker is looked at once by the pins, the memory and the IRQs' consumers
// together (Decide() feeds them in one pass): on a big host every pass
// streams the worker table from memory again.
std::vector<Worker> CollectWorkers(const Context& ctx);
void AssignHomes(const Context& ctx, std::vector<Worker>& workers, Plan& plan);
// The soft home: widens the waiting workers of a saturated node to the
// nearest node with spare CPU, narrows them back when it is calm again.
void AddSpills(const Context& ctx, std::vector<Worker>& workers, Tally& tally,
               Plan& plan);
void AddIrqCandidates(const Context& ctx, const Consumers& consumers,
                      Candidates& out, Tally& tally, Plan& plan);
void Select(const Context& ctx, const std::vector<Worker>& workers,
            Candidates& candidates, Tally& tally, Plan& plan);
// Steering of the targets' reuseport groups, after the pins are chosen (a
// worker's socket follows it in the same tick).
void AddConnections(const Context& ctx, const std::vector<Worker>& workers,
                    Plan& plan);
void AddNotes(const Context& ctx, const Tally& tally, size_t workers,
              Plan& plan);

// Used by Select for the chosen.
std::vector<Action> TakeMigrations(const Context& ctx,
                                   const std::vector<Worker>& workers,
                                   std::vector<MemoryCandidate>& memory,
                                   const std::vector<bool>& pinned_now,
                                   MoveLimit& limit, Tally& tally);

}  // namespace locus::decide_internal

#endif  // LOCUS_POLICY_ENGINE_H_
