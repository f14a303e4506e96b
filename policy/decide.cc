#include "policy/decide.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "policy/cpu_list.h"

namespace locus {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr uint64_t kNsPerSec = 1'000'000'000;

std::string Pct(double share) { return absl::StrFormat("%.0f%%", 100 * share); }
std::string MiB(uint64_t bytes) {
  // Two calls: the format must be a constant for StrFormat's check.
  if (bytes < 10 * kMiB) return absl::StrFormat("%.1f MiB", bytes / kMiB);
  return absl::StrFormat("%.0f MiB", bytes / kMiB);
}
std::string Ms(uint64_t ns) { return absl::StrFormat("%.1f ms", ns / 1e6); }

// Splits `total` items over weights by largest remainder. Equal remainders
// go to the index with the larger `prefer` (when given: how many items would
// rather be there, so an even split moves nothing it need not), then to the
// lower index, so the split is deterministic.
std::vector<int> Apportion(int total, const std::vector<double>& weights,
                           const std::vector<int>& prefer = {}) {
  std::vector<int> out(weights.size(), 0);
  double sum = 0;
  for (double w : weights) sum += w;
  if (total <= 0 || sum <= 0) return out;
  std::vector<std::pair<double, int>> remainders;
  int given = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    double exact = total * weights[i] / sum;
    out[i] = static_cast<int>(std::floor(exact));
    given += out[i];
    // Rounded so that remainders equal but for floating-point noise tie.
    double remainder = std::round((exact - out[i]) * 1e9) / 1e9;
    remainders.push_back({remainder, static_cast<int>(i)});
  }
  auto preferred = [&](int i) {
    return i < static_cast<int>(prefer.size()) ? prefer[i] : 0;
  };
  std::stable_sort(remainders.begin(), remainders.end(),
                   [&](const auto& a, const auto& b) {
                     if (a.first != b.first) return a.first > b.first;
                     return preferred(a.second) > preferred(b.second);
                   });
  for (int i = 0; given < total; ++i, ++given) {
    ++out[remainders[i % remainders.size()].second];
  }
  return out;
}

struct Worker {
  const Target* target = nullptr;
  int pinned = -1;      // node index every thread is confined to, or -1
  int pinned_cpu = -1;  // the one CPU every thread is confined to, or -1
  int pref = -1;        // node index it would rather keep
  int rank = 0;         // how strongly it holds `pref`
  int home = -1;        // node index chosen this tick
  uint64_t total_run = 0;
  uint64_t total_pages = 0;
  uint64_t net_rx_ns = 0;
  uint64_t cross_node_migrations = 0;
  uint64_t faults = 0;         // NUMA faults, all memory nodes
  uint64_t remote_faults = 0;  // of which the faulting CPU was elsewhere
  bool held = false;
  int dwell_node = -1;  // node it must stay on (moved within dwell), or -1
};

enum class CandidateKind { kPin = 0, kIrq = 1 };

// A possible move. Candidates are many on a big host and few are chosen, so
// they hold numbers; reasons are written only for the chosen.
struct Candidate {
  CandidateKind kind;
  int index;  // worker index or IRQ index in the snapshot
  double gain;
  int32_t id;           // pid or IRQ number, for a deterministic order
  int node;             // target node index
  int cpu;              // the one CPU; -1 for a pin to all of the node's CPUs
  double run_off = 0;   // pin: share of runtime off the node
  double remote = -1;   // pin: share of faults remote; -1: no faults
  int irq_reason = -1;  // index in irq_reasons_ (IRQs are few)
  int from = -1;        // node index it leaves; -1: several or unknown
};

struct MemoryCandidate {
  int worker;
  double gain;
  uint64_t bytes;
  uint64_t faults;    // judged on faults when > 0, else on pages
  uint64_t off_home;  // faults off the home node
  bool finishing;     // a migration under way, carried on below the threshold
};

class Engine {
 public:
  Engine(const Snapshot& snapshot, const v1::Policy& policy,
         const History& history)
      : s_(snapshot), p_(policy), h_(history) {}

  Plan Run();

 private:
  int NodeOfCpu(int cpu) const {
    return cpu >= 0 && cpu < static_cast<int>(cpu_index_.size())
               ? cpu_index_[cpu]
               : -1;
  }
  int NodeIndexOfId(int id) const {
    return id >= 0 && id < static_cast<int>(index_of_id_.size())
               ? index_of_id_[id]
               : -1;
  }
  int Id(int index) const { return s_.topology.nodes[index].id; }
  int Distance(int from, int to) const {
    if (from < 0) return 0;
    const std::vector<int>& d = s_.topology.nodes[from].distances;
    return to < static_cast<int>(d.size()) ? d[to] : (from == to ? 10 : 20);
  }
  // Runtime on node n. Summed again when needed rather than stored per
  // worker and node: on a big host that table costs more (fresh pages every
  // tick) than the sums.
  uint64_t Run(int w, int n) const {
    uint64_t sum = 0;
    for (const ThreadSample& t : workers_[w].target->threads) {
      if (n < static_cast<int>(t.runtime_ns.size())) sum += t.runtime_ns[n];
    }
    return sum;
  }
  // Faults on memory of node n (local and remote).
  uint64_t Faults(int w, int n) const {
    uint64_t sum = 0;
    for (const ThreadSample& t : workers_[w].target->threads) {
      if (n < static_cast<int>(t.faults.size())) {
        sum += t.faults[n].local + t.faults[n].remote;
      }
    }
    return sum;
  }
  std::string PinReason(const Candidate& c) const;
  uint64_t Pages(const Worker& w, int n) const {
    return n < static_cast<int>(w.target->resident_pages.size())
               ? w.target->resident_pages[n]
               : 0;
  }
  // The entity's history: dwell (a node it must stay on) and hold-down.
  void Look(EntityKey key, bool* held, int* dwell_node) const;
  // We pinned it to its home within its dwell. The host model is refreshed
  // on its own thread, so a snapshot may predate the pin and still show the
  // worker where it was: it is home all the same, and pinning it again would
  // be a second move of the same worker.
  static bool PinnedHomeByUs(const Worker& w) {
    return !w.held && w.dwell_node >= 0 && w.dwell_node == w.home;
  }
  // Moving the entity to node index `to` would take it straight back to the
  // node our last move took it from, less than hold_down_s ago. A signal that
  // flips (NET_RX charged to whichever worker shares the IRQ's CPUs, a
  // consumer split that ties) would otherwise move it back and forth, one
  // dwell apart; a move that was wrong is for the verifier to revert.
  bool WouldReturn(EntityKey key, int to) const {
    const EntityHistory* entry = h_.Find(key);
    return entry != nullptr && entry->left_node >= 0 &&
           NodeIndexOfId(entry->left_node) == to &&
           s_.now_ns < entry->last_move_ns + hold_ns_;
  }

  bool Setup(Plan& plan);
  void CollectWorkers();
  std::vector<int> Quotas(Plan& plan) const;
  void AssignHomes(Plan& plan);
  void PinCandidates();
  void MemoryCandidates();
  void IrqCandidates(Plan& plan);
  void Select(Plan& plan);

  const Snapshot& s_;
  const v1::Policy& p_;
  const History& h_;
  int nodes_ = 0;
  uint64_t dwell_ns_ = 0;
  uint64_t hold_ns_ = 0;
  double min_gain_ = 0;
  std::vector<int> index_of_id_;
  std::vector<int> cpu_index_;
  std::vector<std::vector<int>> worker_cpus_;  // per node index
  std::vector<std::vector<int>> irq_cpus_;     // per node index
  std::vector<Worker> workers_;
  std::vector<uint64_t> run_;  // scratch: one worker's runtime per node
  std::vector<Candidate> candidates_;
  std::vector<std::string> irq_reasons_;
  std::vector<MemoryCandidate> memory_;
  int converged_ = 0;
  int dwelling_ = 0;
  int returning_ = 0;
  int held_ = 0;
  int below_gain_ = 0;
  int irqs_in_place_ = 0;
  int managed_irqs_ = 0;
};

void Engine::Look(EntityKey key, bool* held, int* dwell_node) const {
  *held = false;
  *dwell_node = -1;
  const EntityHistory* entry = h_.Find(key);
  if (entry == nullptr) return;
  *held = entry->held_until_ns > s_.now_ns;
  if (entry->last_move_ns != 0 && s_.now_ns < entry->last_move_ns + dwell_ns_) {
    *dwell_node = NodeIndexOfId(entry->node);
  }
}

bool Engine::Setup(Plan& plan) {
  const Topology& topology = s_.topology;
  nodes_ = static_cast<int>(topology.nodes.size());
  dwell_ns_ = uint64_t{p_.stability().dwell_s()} * kNsPerSec;
  hold_ns_ = uint64_t{p_.stability().hold_down_s()} * kNsPerSec;
  min_gain_ = p_.stability().min_gain();
  for (int i = 0; i < nodes_; ++i) {
    int id = topology.nodes[i].id;
    if (id < 0) continue;
    if (id >= static_cast<int>(index_of_id_.size())) {
      index_of_id_.resize(id + 1, -1);
    }
    index_of_id_[id] = i;
  }
  cpu_index_.assign(topology.cpu_node.size(), -1);
  for (size_t cpu = 0; cpu < topology.cpu_node.size(); ++cpu) {
    cpu_index_[cpu] = NodeIndexOfId(topology.cpu_node[cpu]);
  }
  // A policy that reached Decide was validated; a bad list means "all".
  auto allowed = [](const std::string& text) {
    absl::StatusOr<std::vector<int>> cpus = ParseCpuList(text);
    absl::flat_hash_set<int> set;
    if (cpus.ok()) set.insert(cpus->begin(), cpus->end());
    return set;
  };
  absl::flat_hash_set<int> placement_cpus = allowed(p_.placement().cpus());
  absl::flat_hash_set<int> irq_cpus = allowed(p_.irqs().cpus());
  worker_cpus_.assign(nodes_, {});
  irq_cpus_.assign(nodes_, {});
  int nodes_with_cpus = 0;
  for (int i = 0; i < nodes_; ++i) {
    for (int cpu : topology.nodes[i].cpus) {
      // The node's list and cpu_node must agree; a CPU they disagree on is
      // not used (a snapshot torn by hotplug must not index out of range).
      if (NodeOfCpu(cpu) != i) continue;
      if (placement_cpus.empty() || placement_cpus.contains(cpu)) {
        worker_cpus_[i].push_back(cpu);
      }
      if (irq_cpus.empty() || irq_cpus.contains(cpu)) {
        irq_cpus_[i].push_back(cpu);
      }
    }
  }
  for (int i = 0; i < nodes_; ++i) {
    bool any = std::any_of(topology.nodes[i].cpus.begin(),
                           topology.nodes[i].cpus.end(),
                           [&](int cpu) { return NodeOfCpu(cpu) == i; });
    if (any) ++nodes_with_cpus;
  }
  if (nodes_with_cpus < 2) {
    plan.notes.push_back(absl::StrCat(
        nodes_with_cpus, " NUMA node", nodes_with_cpus == 1 ? "" : "s",
        " with CPUs: nothing to balance, every access is local"));
    return false;
  }
  return true;
}

void Engine::CollectWorkers() {
  absl::flat_hash_set<std::string> comms(p_.targets().comm().begin(),
                                         p_.targets().comm().end());
  workers_.reserve(s_.targets.size());
  for (const Target& target : s_.targets) {
    if (!comms.contains(target.comm)) continue;
    if (p_.targets().workers_only() && target.role != TargetRole::kWorker) {
      continue;
    }
    Worker w;
    w.target = &target;
    workers_.push_back(w);
  }

  for (size_t wi = 0; wi < workers_.size(); ++wi) {
    Worker& w = workers_[wi];
    const Target& t = *w.target;
    run_.assign(nodes_, 0);
    bool confined = !t.threads.empty();
    int pinned = -1;
    int pinned_cpu = -2;  // -2: none seen yet
    int last_cpu_node = -1;
    for (const ThreadSample& thread : t.threads) {
      size_t n_max = std::min<size_t>(nodes_, thread.runtime_ns.size());
      for (size_t n = 0; n < n_max; ++n) {
        run_[n] += thread.runtime_ns[n];
        w.total_run += thread.runtime_ns[n];
      }
      size_t m_max = std::min<size_t>(nodes_, thread.faults.size());
      for (size_t m = 0; m < m_max; ++m) {
        uint64_t all = thread.faults[m].local + thread.faults[m].remote;
        w.faults += all;
        w.remote_faults += thread.faults[m].remote;
      }
      w.net_rx_ns += thread.net_rx_softirq_ns;
      w.cross_node_migrations += thread.cross_node_migrations;
      if (last_cpu_node < 0) last_cpu_node = NodeOfCpu(thread.cpu);
      if (!confined) continue;
      if (thread.allowed_cpus.empty()) {
        confined = false;
        continue;
      }
      for (int cpu : thread.allowed_cpus) {
        int n = NodeOfCpu(cpu);
        if (n < 0 || (pinned >= 0 && n != pinned)) {
          confined = false;
          break;
        }
        pinned = n;
      }
      int single =
          thread.allowed_cpus.size() == 1 ? thread.allowed_cpus[0] : -1;
      pinned_cpu = (pinned_cpu == -2 || pinned_cpu == single) ? single : -1;
    }
    if (confined) {
      w.pinned = pinned;
      w.pinned_cpu = pinned_cpu >= 0 ? pinned_cpu : -1;
    }
    for (int n = 0; n < nodes_; ++n) w.total_pages += Pages(w, n);

    int dwell_node = -1;
    Look({EntityKind::kTask, t.pid}, &w.held, &dwell_node);
    const EntityHistory* entry = h_.Find({EntityKind::kTask, t.pid});
    int history_node = entry != nullptr ? NodeIndexOfId(entry->node) : -1;
    if (history_node >= 0 && worker_cpus_[history_node].empty()) {
      history_node = -1;
    }
    w.dwell_node = dwell_node;
    int run_node = -1;
    uint64_t best_run = 0;
    int mem_node = -1;
    uint64_t best_pages = 0;
    for (int n = 0; n < nodes_; ++n) {
      if (run_[n] > best_run) best_run = run_[n], run_node = n;
      if (Pages(w, n) > best_pages) best_pages = Pages(w, n), mem_node = n;
    }
    if (w.held) {
      // Held down: it stays where it is and keeps that node's share.
      w.pref = w.pinned >= 0 ? w.pinned : run_node;
      w.rank = 4;
    } else if (history_node >= 0) {
      w.pref = history_node, w.rank = 3;
    } else if (w.pinned >= 0 && !worker_cpus_[w.pinned].empty()) {
      w.pref = w.pinned, w.rank = 2;
    } else if (mem_node >= 0 && 2 * best_pages >= w.total_pages) {
      // Moving a thread is cheap, moving its memory is not.
      w.pref = mem_node, w.rank = 1;
    } else if (run_node >= 0) {
      w.pref = run_node, w.rank = 1;
    } else {
      w.pref = last_cpu_node, w.rank = 0;
    }
    if (w.pref >= 0 && worker_cpus_[w.pref].empty() && !w.held) w.pref = -1;
  }
}

std::vector<int> Engine::Quotas(Plan& plan) const {
  const int total = static_cast<int>(workers_.size());
  std::vector<double> cpus(nodes_);
  for (int n = 0; n < nodes_; ++n) cpus[n] = worker_cpus_[n].size();
  std::vector<int> prefer(nodes_, 0);
  for (const Worker& w : workers_) {
    if (w.pref >= 0) ++prefer[w.pref];
  }
  if (p_.placement().strategy() != v1::Placement::STRATEGY_NEAR_NIC) {
    return Apportion(total, cpus, prefer);
  }
  // near_nic: the named NIC's node, else that of the NIC with most queues.
  int nic_node = -1;
  std::string nic = p_.placement().nic();
  if (nic.empty()) {
    // The device with the most queues (then by name): a choice that noise in
    // interrupt counts cannot flip from tick to tick.
    absl::flat_hash_map<std::string, int> queues;
    for (const IrqSample& irq : s_.irqs) {
      if (!irq.net_device.empty() && irq.device_node >= 0) {
        ++queues[irq.net_device];
      }
    }
    int best = 0;
    for (const auto& [name, count] : queues) {
      if (count > best || (count == best && name < nic)) {
        nic = name, best = count;
      }
    }
  }
  for (const IrqSample& irq : s_.irqs) {
    if (irq.net_device == nic && irq.device_node >= 0) {
      nic_node = NodeIndexOfId(irq.device_node);
      break;
    }
  }
  if (nic_node < 0 || worker_cpus_[nic_node].empty()) {
    plan.notes.push_back(
        absl::StrCat("near_nic: no NIC with a known node",
                     nic.empty() ? "" : absl::StrCat(" (", nic, ")"),
                     " and usable CPUs; spreading workers instead"));
    return Apportion(total, cpus, prefer);
  }
  std::vector<int> order;
  for (int n = 0; n < nodes_; ++n) {
    if (!worker_cpus_[n].empty()) order.push_back(n);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return Distance(nic_node, a) < Distance(nic_node, b) ||
           (Distance(nic_node, a) == Distance(nic_node, b) && a == nic_node &&
            b != nic_node);
  });
  std::vector<int> quota(nodes_, 0);
  int left = total;
  for (int n : order) {
    int capacity =
        std::max(1, static_cast<int>(p_.placement().node_capacity() * cpus[n]));
    quota[n] = std::min(capacity, left);
    left -= quota[n];
  }
  if (left > 0) {
    // More workers than every node's capacity: the rest by CPUs.
    std::vector<int> extra = Apportion(left, cpus);
    for (int n = 0; n < nodes_; ++n) quota[n] += extra[n];
  }
  return quota;
}

void Engine::AssignHomes(Plan& plan) {
  if (workers_.empty() || !p_.placement().enabled()) return;
  std::vector<int> left = Quotas(plan);
  // Strongest claims first; within a rank the snapshot's order decides.
  for (int rank = 4; rank >= 0; --rank) {
    for (Worker& w : workers_) {
      if (w.rank != rank || w.pref < 0) continue;
      if (left[w.pref] > 0 || w.held) {
        w.home = w.pref;
        --left[w.pref];
      }
    }
  }
  for (Worker& w : workers_) {
    if (w.home >= 0) continue;
    int best = -1;
    for (int n = 0; n < nodes_; ++n) {
      if (left[n] <= 0) continue;
      if (best < 0 || Pages(w, n) > Pages(w, best) ||
          (Pages(w, n) == Pages(w, best) &&
           Distance(w.pref, n) < Distance(w.pref, best))) {
        best = n;
      }
    }
    w.home = best >= 0 ? best : w.pref;
    if (best >= 0) --left[best];
  }
}

void Engine::PinCandidates() {
  if (!p_.placement().enabled()) return;
  candidates_.reserve(workers_.size() + s_.irqs.size());
  const bool per_cpu = p_.placement().pin_to() == v1::Placement::PIN_TO_CPU;
  // pin_to cpu: workers already on one CPU of their home keep it; others get
  // the CPU with the fewest workers, then the least busy.
  std::vector<int> cpu_load(cpu_index_.size(), 0);
  if (per_cpu) {
    for (const Worker& w : workers_) {
      if (w.home >= 0 && w.pinned_cpu >= 0 &&
          NodeOfCpu(w.pinned_cpu) == w.home) {
        ++cpu_load[w.pinned_cpu];
      }
    }
  }
  for (size_t wi = 0; wi < workers_.size(); ++wi) {
    const Worker& w = workers_[wi];
    if (w.home < 0) continue;
    bool in_place =
        PinnedHomeByUs(w) ||
        (per_cpu ? (w.pinned_cpu >= 0 && NodeOfCpu(w.pinned_cpu) == w.home)
                 : w.pinned == w.home);
    if (in_place) {
      ++converged_;
      continue;
    }
    if (w.held) {
      ++held_;
      continue;
    }
    if (w.dwell_node >= 0 && w.dwell_node != w.home) {
      ++dwelling_;
      continue;
    }
    // (Only while the policy still allows the node it is on.)
    if (w.pinned >= 0 && !worker_cpus_[w.pinned].empty() &&
        WouldReturn({EntityKind::kTask, w.target->pid}, w.home)) {
      ++returning_;
      continue;
    }
    double run_off = 0;
    if (w.total_run > 0) {
      run_off = double(w.total_run - Run(wi, w.home)) / w.total_run;
    } else if (w.pinned >= 0 && w.pinned != w.home) {
      run_off = 1;
    }
    // Faults on memory elsewhere stay remote once pinned home; the rest
    // become local.
    const uint64_t faults = w.faults;
    double fault_gain = 0;
    if (faults > 0 && faults >= p_.memory().min_faults()) {
      double off_home = double(faults - Faults(wi, w.home)) / faults;
      fault_gain = std::max(0.0, double(w.remote_faults) / faults - off_home);
    }
    double gain = std::max(run_off, fault_gain);
    if (gain < min_gain_ || gain <= 0) {
      ++below_gain_;
      continue;
    }
    Candidate c{CandidateKind::kPin,
                static_cast<int>(wi),
                gain,
                w.target->pid,
                w.home,
                -1,
                0,
                -1,
                -1};
    c.run_off = run_off;
    c.from = w.pinned;
    if (faults > 0) c.remote = double(w.remote_faults) / faults;
    if (per_cpu) {
      int best = -1;
      for (int cpu : worker_cpus_[w.home]) {
        double busy =
            cpu < static_cast<int>(s_.cpus.size()) ? s_.cpus[cpu].busy : 0;
        double best_busy = best >= 0 && best < static_cast<int>(s_.cpus.size())
                               ? s_.cpus[best].busy
                               : 0;
        if (best < 0 || cpu_load[cpu] < cpu_load[best] ||
            (cpu_load[cpu] == cpu_load[best] && busy < best_busy)) {
          best = cpu;
        }
      }
      if (best < 0) continue;
      ++cpu_load[best];
      c.cpu = best;
    }
    candidates_.push_back(std::move(c));
  }
}

std::string Engine::PinReason(const Candidate& c) const {
  const Worker& w = workers_[c.index];
  const double tick_s = std::max<uint64_t>(s_.tick_ns, 1) / 1e9;
  std::string reason =
      absl::StrCat("worker ", w.target->pid, " (", w.target->comm, ") ");
  if (w.pinned >= 0) {
    absl::StrAppend(&reason, "pinned to node ", Id(w.pinned));
  } else {
    absl::StrAppend(&reason, Pct(c.run_off), " of runtime off node ",
                    Id(c.node));
  }
  if (c.remote >= 0) {
    absl::StrAppend(&reason, ", ", Pct(c.remote), " remote faults");
  }
  absl::StrAppend(
      &reason, ", ", absl::StrFormat("%.0f", w.cross_node_migrations / tick_s),
      " cross-node migrations/s -> pin to node ", Id(c.node),
      c.cpu >= 0 ? absl::StrCat(" cpu ", c.cpu)
                 : absl::StrCat(" cpus ", FormatCpuList(worker_cpus_[c.node])),
      " (expected gain ", Pct(c.gain), ")");
  return reason;
}

void Engine::MemoryCandidates() {
  if (!p_.memory().enabled() || !p_.placement().enabled()) return;
  memory_.reserve(workers_.size());
  for (size_t wi = 0; wi < workers_.size(); ++wi) {
    const Worker& w = workers_[wi];
    if (w.home < 0 || w.total_pages == 0) continue;
    bool held = false;
    int dwell_node = -1;
    Look({EntityKind::kMemory, w.target->pid}, &held, &dwell_node);
    if (held || w.held) continue;
    if (dwell_node >= 0 && dwell_node != w.home) {
      ++dwelling_;
      continue;
    }
    const uint64_t faults = w.faults;
    const uint64_t off_home = faults - Faults(wi, w.home);
    const uint64_t pages_off = w.total_pages - Pages(w, w.home);
    if (pages_off == 0) continue;
    // The threshold starts a migration; it does not stop one half way. Pages
    // moved home within the dwell time, whose last pass still found pages
    // to move, keep following until a pass finds none (RecordSettled).
    const EntityHistory* entry = h_.Find({EntityKind::kMemory, w.target->pid});
    // A pass that just found nothing movable would find nothing again: the
    // pages counted off home are shared or file pages (seen with nginx
    // workers, whose libraries sit on the node that first read them).
    if (entry != nullptr && entry->settled() &&
        s_.now_ns < entry->settled_ns + dwell_ns_) {
      ++dwelling_;
      continue;
    }
    const bool finishing =
        dwell_node == w.home && entry != nullptr && !entry->settled();
    const double threshold = p_.memory().remote_threshold();
    bool by_faults =
        !finishing && faults > 0 && faults >= p_.memory().min_faults();
    // A fault counts on the node its page is on afterwards, and NUMA
    // balancing migrates on the fault itself: a worker confined to its home
    // whose pages AutoNUMA is moving there shows remote faults on home
    // memory. Faults that contradict themselves so say nothing about where
    // the rest of its memory is; its pages do.
    if (by_faults && w.pinned == w.home &&
        double(w.remote_faults) / faults >= threshold &&
        double(off_home) / faults < threshold) {
      by_faults = false;
    }
    double share = by_faults ? double(off_home) / faults
                             : double(pages_off) / w.total_pages;
    if (!finishing && (share < threshold || share < min_gain_)) continue;
    memory_.push_back({static_cast<int>(wi), share,
                       pages_off * w.target->page_size, by_faults ? faults : 0,
                       off_home, finishing});
  }
}

void Engine::IrqCandidates(Plan& plan) {
  if (!p_.irqs().enabled()) return;
  absl::flat_hash_set<std::string> devices(p_.irqs().devices().begin(),
                                           p_.irqs().devices().end());
  // Consumers per node: their NET_RX softirq time, else how many there are.
  std::vector<double> net_rx(nodes_, 0), count(nodes_, 0);
  for (const Worker& w : workers_) {
    int n = w.home >= 0 ? w.home : w.pref;
    if (n < 0) continue;
    net_rx[n] += w.net_rx_ns;
    count[n] += 1;
  }
  double net_rx_total = 0;
  for (int n = 0; n < nodes_; ++n) {
    if (irq_cpus_[n].empty()) net_rx[n] = count[n] = 0;
    net_rx_total += net_rx[n];
  }
  const std::vector<double>& weight = net_rx_total > 0 ? net_rx : count;
  double weight_total = 0;
  for (double v : weight) weight_total += v;

  // NIC queue IRQs by device, in queue order.
  std::vector<std::string> names;
  absl::flat_hash_map<std::string, std::vector<int>> by_device;
  for (size_t i = 0; i < s_.irqs.size(); ++i) {
    const IrqSample& irq = s_.irqs[i];
    if (irq.net_device.empty()) continue;
    if (!devices.empty() && !devices.contains(irq.net_device)) continue;
    if (irq.managed) {
      ++managed_irqs_;
      continue;
    }
    auto [it, added] = by_device.try_emplace(irq.net_device);
    if (added) names.push_back(irq.net_device);
    it->second.push_back(static_cast<int>(i));
  }
  if (managed_irqs_ > 0) {
    plan.notes.push_back(
        absl::StrCat(managed_irqs_,
                     " kernel-managed NIC IRQ(s) left alone (affinity is "
                     "the kernel's)"));
  }
  if (names.empty()) return;
  if (weight_total <= 0) {
    plan.notes.push_back("no workers to steer NIC IRQs towards");
    return;
  }
  std::sort(names.begin(), names.end());
  std::vector<uint64_t> softirq(cpu_index_.size(), 0);
  for (const CpuSample& cpu : s_.cpus) {
    if (cpu.cpu < 0 || cpu.cpu >= static_cast<int>(softirq.size())) continue;
    for (uint64_t ns : cpu.softirq_ns) softirq[cpu.cpu] += ns;
  }
  std::vector<int> assigned(cpu_index_.size(), 0);
  for (const std::string& name : names) {
    std::vector<int>& list = by_device[name];
    std::stable_sort(list.begin(), list.end(), [&](int a, int b) {
      return std::make_pair(s_.irqs[a].queue, s_.irqs[a].irq) <
             std::make_pair(s_.irqs[b].queue, s_.irqs[b].irq);
    });
    const int queues = static_cast<int>(list.size());
    std::vector<int> left = Apportion(queues, weight);
    std::vector<int> current(list.size(), -1), target(list.size(), -1);
    std::vector<uint64_t> totals(list.size(), 0);
    // Interrupts of each IRQ per node: where its traffic is handled now.
    std::vector<std::vector<double>> handled(list.size());
    std::vector<int> on_node(nodes_, 0);
    for (size_t q = 0; q < list.size(); ++q) {
      const IrqSample& irq = s_.irqs[list[q]];
      handled[q].assign(nodes_, 0);
      for (size_t cpu = 0; cpu < irq.count_per_cpu.size(); ++cpu) {
        int n = NodeOfCpu(static_cast<int>(cpu));
        if (n >= 0) handled[q][n] += irq.count_per_cpu[cpu];
        totals[q] += irq.count_per_cpu[cpu];
      }
      if (totals[q] == 0) {
        for (int cpu : irq.affinity) {
          int n = NodeOfCpu(cpu);
          if (n >= 0) handled[q][n] += 1;
        }
      }
      double sum = 0;
      for (double v : handled[q]) sum += v;
      for (double& v : handled[q]) v = sum > 0 ? v / sum : 0;
      // Its node: the one its affinity names, else where most of it lands.
      int node = -1;
      for (int cpu : irq.affinity) {
        int n = NodeOfCpu(cpu);
        if (n < 0 || (node >= 0 && n != node)) {
          node = -1;
          break;
        }
        node = n;
      }
      current[q] = node;
      if (node >= 0) ++on_node[node];
      // Held, or moved within its dwell: that node is where it stays.
      bool held = false;
      int dwell_node = -1;
      Look({EntityKind::kIrq, irq.irq}, &held, &dwell_node);
      int keep = held ? node : (dwell_node >= 0 ? dwell_node : node);
      if (keep >= 0 && (left[keep] > 0 || held || dwell_node >= 0)) {
        target[q] = keep;
        --left[keep];
      }
    }
    for (size_t q = 0; q < list.size(); ++q) {
      if (target[q] >= 0) continue;
      int device_node = NodeIndexOfId(s_.irqs[list[q]].device_node);
      int best = -1;
      for (int n = 0; n < nodes_; ++n) {
        if (left[n] <= 0 || weight[n] <= 0) continue;
        if (best < 0 || left[n] > left[best] ||
            (left[n] == left[best] &&
             Distance(device_node, n) < Distance(device_node, best))) {
          best = n;
        }
      }
      target[q] = best;
      if (best >= 0) --left[best];
    }
    // The gain of a move is how much closer the queues' split gets to the
    // consumers' split (half the change in total variation distance): 80% for
    // a single queue moving from a node with 10% of the consumers to one with
    // 90%, 1% between nodes with 17% and 18%, which is noise, not a move.
    auto share = [&](int n) { return weight[n] / weight_total; };
    auto mismatch = [&](int n, int count) {
      return std::abs(double(count) / queues - share(n));
    };
    for (size_t q = 0; q < list.size(); ++q) {
      const IrqSample& irq = s_.irqs[list[q]];
      int to = target[q];
      int from = current[q];
      if (to < 0) continue;
      if (to == from) {
        ++irqs_in_place_;
        continue;
      }
      bool held = false;
      int dwell_node = -1;
      Look({EntityKind::kIrq, irq.irq}, &held, &dwell_node);
      if (held) {
        ++held_;
        continue;
      }
      if (dwell_node == to) {
        // Moved there by us within its dwell; the snapshot predates it (see
        // PinnedHomeByUs). Moving it again would pick another CPU for nothing.
        ++irqs_in_place_;
        continue;
      }
      if (dwell_node >= 0 && dwell_node != to) {
        ++dwelling_;
        continue;
      }
      if (from >= 0 && !irq_cpus_[from].empty() &&
          WouldReturn({EntityKind::kIrq, irq.irq}, to)) {
        ++returning_;
        continue;
      }
      double gain;
      if (from >= 0) {
        gain = (mismatch(from, on_node[from]) + mismatch(to, on_node[to]) -
                mismatch(from, on_node[from] - 1) -
                mismatch(to, on_node[to] + 1)) /
               2;
      } else {
        // Spread over nodes: local now for the consumers where it lands.
        double local_now = 0;
        for (int n = 0; n < nodes_; ++n) local_now += handled[q][n] * share(n);
        gain = share(to) - local_now;
      }
      if (gain < min_gain_ || gain <= 0) {
        ++below_gain_;
        continue;
      }
      if (from >= 0) --on_node[from];
      ++on_node[to];
      int best = -1;
      for (int cpu : irq_cpus_[to]) {
        if (best < 0 || assigned[cpu] < assigned[best] ||
            (assigned[cpu] == assigned[best] && softirq[cpu] < softirq[best])) {
          best = cpu;
        }
      }
      if (best < 0) continue;
      ++assigned[best];
      Candidate c{CandidateKind::kIrq,
                  list[q],
                  gain,
                  irq.irq,
                  to,
                  best,
                  0,
                  -1,
                  static_cast<int>(irq_reasons_.size())};
      c.from = from;
      double off_share = 1 - handled[q][to];
      irq_reasons_.push_back(absl::StrCat(
          "irq ", irq.irq, " (", irq.net_device, " queue ", irq.queue,
          irq.name.empty() ? "" : absl::StrCat(", ", irq.name), ") ",
          totals[q] > 0
              ? absl::StrCat(Pct(off_share), " of ", totals[q],
                             " interrupts off node ", Id(to))
              : absl::StrCat("affine to ", from >= 0
                                               ? absl::StrCat("node ", Id(from))
                                               : "several nodes"),
          ", its consumers on node ", Id(to), " (",
          net_rx_total > 0
              ? absl::StrCat(Pct(share(to)), " of NET_RX ",
                             Ms(static_cast<uint64_t>(net_rx_total)))
              : absl::StrCat(count[to], " of ", weight_total, " workers"),
          ") -> cpu ", best, " on node ", Id(to), " (least softirq: ",
          Ms(softirq[best]), ", expected gain ", Pct(gain), ")"));
      candidates_.push_back(c);
    }
  }
}

void Engine::Select(Plan& plan) {
  const int max_moves = static_cast<int>(p_.stability().max_moves_per_tick());
  auto by_gain = [](const auto& a, const auto& b, int32_t ida, int32_t idb) {
    return a.gain > b.gain || (a.gain == b.gain && ida < idb);
  };
  // (kind, id) is unique: a total order, so the plan is deterministic.
  std::sort(candidates_.begin(), candidates_.end(),
            [&](const Candidate& a, const Candidate& b) {
              if (a.gain != b.gain) return a.gain > b.gain;
              if (a.kind != b.kind) return a.kind < b.kind;
              return a.id < b.id;
            });
  int moves = 0;
  int deferred = 0;
  std::vector<bool> pinned_now(workers_.size(), false);
  std::vector<Action> pins, irqs, migrations;
  for (Candidate& c : candidates_) {
    if (moves >= max_moves) {
      ++deferred;
      continue;
    }
    ++moves;
    if (c.kind == CandidateKind::kPin) {
      const Worker& w = workers_[c.index];
      pinned_now[c.index] = true;
      const std::vector<int> cpus =
          c.cpu >= 0 ? std::vector<int>{c.cpu} : worker_cpus_[c.node];
      const std::string reason = PinReason(c);
      for (const ThreadSample& thread : w.target->threads) {
        Action a;
        a.op = PinThread{w.target->pid, thread.tid, Id(c.node), cpus};
        a.reason = reason;
        a.expected_gain = c.gain;
        a.from_node = c.from >= 0 ? Id(c.from) : -1;
        pins.push_back(std::move(a));
      }
    } else {
      Action a;
      a.op = SetIrqAffinity{s_.irqs[c.index].irq, {c.cpu}};
      a.reason = std::move(irq_reasons_[c.irq_reason]);
      a.expected_gain = c.gain;
      a.from_node = c.from >= 0 ? Id(c.from) : -1;
      irqs.push_back(std::move(a));
    }
  }

  // Memory follows threads: only workers already confined to their home or
  // pinned there in this plan.
  std::sort(memory_.begin(), memory_.end(),
            [&](const MemoryCandidate& a, const MemoryCandidate& b) {
              return by_gain(a, b, workers_[a.worker].target->pid,
                             workers_[b.worker].target->pid);
            });
  const double tick_s = s_.tick_ns / 1e9;
  uint64_t budget =
      static_cast<uint64_t>(p_.memory().budget_mb_per_s() * kMiB * tick_s);
  const uint64_t budget_total = budget;
  std::vector<uint64_t> room(nodes_, std::numeric_limits<uint64_t>::max());
  for (int n = 0; n < nodes_; ++n) {
    const Node& node = s_.topology.nodes[n];
    if (node.mem_total_bytes == 0) continue;  // unknown: no cap
    uint64_t reserve =
        node.mem_total_bytes / 100 * p_.memory().reserve_free_pct();
    room[n] = node.mem_free_bytes > reserve ? node.mem_free_bytes - reserve : 0;
  }
  int budget_deferred = 0;
  std::vector<int> full_nodes;
  for (const MemoryCandidate& m : memory_) {
    const Worker& w = workers_[m.worker];
    if (w.pinned != w.home && !pinned_now[m.worker] && !PinnedHomeByUs(w)) {
      continue;
    }
    const uint64_t page = std::max<uint64_t>(w.target->page_size, 1);
    uint64_t bytes = std::min({m.bytes, budget, room[w.home]});
    bytes -= bytes % page;
    if (bytes == 0) {
      if (room[w.home] < page && m.bytes > 0) {
        if (std::find(full_nodes.begin(), full_nodes.end(), w.home) ==
            full_nodes.end()) {
          full_nodes.push_back(w.home);
        }
      } else {
        ++budget_deferred;
      }
      continue;
    }
    if (moves >= max_moves) {
      ++deferred;
      continue;
    }
    ++moves;
    budget -= bytes;
    if (room[w.home] != std::numeric_limits<uint64_t>::max()) {
      room[w.home] -= bytes;
    }
    Action a;
    a.op = MigratePages{w.target->pid, -1, Id(w.home), bytes};
    std::string basis =
        m.faults > 0  ? absl::StrCat(Pct(m.gain), " of NUMA faults (",
                                     m.off_home, " of ", m.faults, ")")
        : m.finishing ? absl::StrCat("migration under way, ", Pct(m.gain),
                                     " of resident pages still")
                      : absl::StrCat(Pct(m.gain), " of resident pages");
    a.reason =
        absl::StrCat("worker ", w.target->pid, " (", w.target->comm, ") ",
                     basis, " off home node ", Id(w.home), " -> migrate ",
                     MiB(bytes), " of ", MiB(m.bytes), " to node ", Id(w.home),
                     " (budget ", p_.memory().budget_mb_per_s(),
                     " MiB/s, expected gain ", Pct(m.gain), ")");
    a.expected_gain = m.gain;
    migrations.push_back(std::move(a));
  }

  // Threads first so memory moves towards where they already run.
  for (auto* list : {&pins, &migrations, &irqs}) {
    for (Action& a : *list) plan.actions.push_back(std::move(a));
  }
  if (deferred > 0) {
    plan.notes.push_back(absl::StrCat(
        deferred, " move(s) deferred: max_moves_per_tick=", max_moves));
  }
  if (budget_deferred > 0) {
    plan.notes.push_back(absl::StrCat(budget_deferred,
                                      " page migration(s) deferred: budget of ",
                                      MiB(budget_total), " this tick spent"));
  }
  for (int n : full_nodes) {
    plan.notes.push_back(absl::StrCat(
        "node ", Id(n), " full: free memory at its ",
        p_.memory().reserve_free_pct(), "% reserve, pages not moved there"));
  }
  if (dwelling_ > 0) {
    plan.notes.push_back(
        absl::StrCat(dwelling_, " entity(ies) within dwell time (",
                     p_.stability().dwell_s(), " s), not moved"));
  }
  if (held_ > 0) {
    plan.notes.push_back(
        absl::StrCat(held_, " entity(ies) held down after a revert"));
  }
  if (returning_ > 0) {
    plan.notes.push_back(
        absl::StrCat(returning_,
                     " entity(ies) not moved back to the node we took them "
                     "from less than hold_down_s (",
                     p_.stability().hold_down_s(), " s) ago"));
  }
  if (plan.actions.empty()) {
    plan.notes.push_back(
        absl::StrCat("converged: ", converged_, " of ", workers_.size(),
                     " workers on their home node, ", irqs_in_place_,
                     " NIC IRQs with their consumers, ", below_gain_,
                     " possible move(s) below min_gain ", Pct(min_gain_)));
  }
}

Plan Engine::Run() {
  Plan plan;
  if (!Setup(plan)) return plan;
  CollectWorkers();
  AssignHomes(plan);
  PinCandidates();
  MemoryCandidates();
  IrqCandidates(plan);
  Select(plan);
  if (p_.mode() == v1::Policy::MODE_DRY_RUN) {
    plan.notes.push_back("dry_run: plan reported, nothing applied");
  }
  return plan;
}

}  // namespace

Plan Decide(const Snapshot& snapshot, const v1::Policy& policy,
            const History& history) {
  return Engine(snapshot, policy, history).Run();
}

}  // namespace locus
