// Properties of Decide() over many generated hosts, workloads and policies:
//  - a plan never exceeds its budgets (moves per tick, page-migration bytes,
//    free-memory reserve) and only names CPUs of the node it targets;
//  - applying each plan (as the actuators and the kernel would) and feeding
//    the result back in converges, and never moves an entity to another node
//    within its dwell time (no ping-pong);
//  - a converged host gives an empty plan, with or without history;
//  - noisy inputs alternating around a converged host cause no moves;
//  - thread workers (HAProxy's, one process, a target per thread) are pinned
//    one thread at a time naming their process, their memory never moved,
//    and a reload's new process converges in its turn.
#include <algorithm>
#include <initializer_list>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "policy/cpu_list.h"
#include "policy/decide.h"
#include "policy/default_policy.h"
#include "policy/tiers.h"
#include "policy/validate.h"
#include "tests/common/snapshot_builder.h"

namespace locus {
namespace {

using testing::AddMemoryNode;
using testing::kGiB;
using testing::kSecond;
using testing::MakeHost;
using testing::MakeNicIrq;
using testing::MakeWorker;
using testing::SetFaultsFromPages;

constexpr int kCases = 300;

int Pick(std::mt19937& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}
template <typename T>
T PickOf(std::mt19937& rng, std::initializer_list<T> list) {
  std::vector<T> choices(list);
  return choices[Pick(rng, 0, static_cast<int>(choices.size()) - 1)];
}

int RunNode(const Target& t) {
  const PerNode<uint64_t>& run = t.threads[0].runtime_ns;
  return static_cast<int>(std::max_element(run.begin(), run.end()) -
                          run.begin());
}

v1::Policy RandomPolicy(std::mt19937& rng, int cpus) {
  v1::Policy p = DefaultPolicy();
  p.mutable_placement()->set_strategy(PickOf(
      rng, {v1::Placement::STRATEGY_SPREAD, v1::Placement::STRATEGY_NEAR_NIC}));
  p.mutable_placement()->set_pin_to(
      PickOf(rng, {v1::Placement::PIN_TO_NODE, v1::Placement::PIN_TO_CPU}));
  p.mutable_placement()->set_node_capacity(PickOf(rng, {0.5, 1.0, 2.0}));
  if (Pick(rng, 0, 3) == 0) {
    p.mutable_placement()->set_cpus(absl::StrCat("1-", cpus - 1));
  }
  if (Pick(rng, 0, 3) == 0) p.mutable_irqs()->set_cpus("0");
  p.mutable_memory()->set_remote_threshold(PickOf(rng, {0.3, 0.5, 0.9}));
  p.mutable_memory()->set_budget_mb_per_s(PickOf(rng, {1, 64, 256, 4096}));
  p.mutable_memory()->set_reserve_free_pct(PickOf(rng, {0, 10, 50}));
  p.mutable_stability()->set_min_gain(PickOf(rng, {0.0, 0.05, 0.1, 0.3}));
  p.mutable_stability()->set_dwell_s(PickOf(rng, {5, 30}));
  p.mutable_stability()->set_max_moves_per_tick(PickOf(rng, {1, 2, 8, 100}));
  p.mutable_targets()->add_comm("haproxy");
  p.mutable_targets()->add_thread_workers("haproxy");
  EXPECT_TRUE(ValidatePolicy(p).ok()) << ValidatePolicy(p);
  return p;
}

constexpr int32_t kHaproxy = 5000;          // its worker process
constexpr int32_t kHaproxyReloaded = 6000;  // the one a reload starts

// HAProxy's worker process `process` with `threads` worker threads (tids
// process, process + 1, ...), each a target as the host scan makes them:
// no resident pages of its own.
void AddHaproxy(Snapshot& s, int32_t process, int threads, std::mt19937& rng) {
  const int nodes = testing::NodesWithCpus(s);
  for (int k = 0; k < threads; ++k) {
    int run = Pick(rng, 0, nodes - 1);
    bool pinned = Pick(rng, 0, 1) == 1;
    Target t = MakeWorker(s, process + k, run, pinned ? run : -1, run, 0);
    t.comm = "haproxy";
    t.process = process;
    t.resident_pages.clear();
    t.threads[0].net_rx_softirq_ns = Pick(rng, 0, 5'000'000);
    s.targets.push_back(t);
  }
}

// A reload: the worker process's threads exit, a new process's start.
void ReloadHaproxy(Snapshot& s, std::mt19937& rng) {
  int threads = 0;
  std::erase_if(s.targets, [&](const Target& t) {
    threads += t.process == kHaproxy;
    return t.process == kHaproxy;
  });
  AddHaproxy(s, kHaproxyReloaded, threads, rng);
}

Snapshot RandomSnapshot(std::mt19937& rng) {
  const int nodes = PickOf(rng, {2, 4, 8});
  const int per_node = Pick(rng, 1, 4);
  Snapshot s = MakeHost(nodes, per_node);
  for (Node& node : s.topology.nodes) {
    node.mem_free_bytes = Pick(rng, 1, 40) * kGiB;
  }
  // A third of the hosts have memory-only nodes: of a lower tier, of the
  // top tier (no performance figures), or on a kernel that lists no tiers.
  if (Pick(rng, 0, 2) == 0) {
    const int tier = PickOf(rng, {-1, 4, 6});
    for (int k = Pick(rng, 1, 2); k > 0; --k) AddMemoryNode(s, tier);
  }
  const int all_nodes = static_cast<int>(s.topology.nodes.size());
  const int workers = Pick(rng, 0, 40);
  for (int i = 0; i < workers; ++i) {
    int run = Pick(rng, 0, nodes - 1);
    bool pinned = Pick(rng, 0, 1) == 1;
    Target t = MakeWorker(s, 1000 + i, run, pinned ? run : -1, run, 0);
    if (!pinned) {
      for (int n = 0; n < nodes; ++n) {
        t.threads[0].runtime_ns[n] =
            Pick(rng, 0, 2) == 0 ? Pick(rng, 0, 500) * 1'000'000ull : 0;
      }
      t.threads[0].cross_node_migrations = Pick(rng, 0, 100);
    }
    for (int k = Pick(rng, 1, 2); k > 0; --k) {
      t.resident_pages[Pick(rng, 0, all_nodes - 1)] += Pick(rng, 0, 50'000);
    }
    SetFaultsFromPages(t, RunNode(t));
    t.threads[0].net_rx_softirq_ns = Pick(rng, 0, 5'000'000);
    int kind = Pick(rng, 0, 9);
    if (kind == 0) t.comm = "postgres";
    if (kind == 1) t.role = TargetRole::kMaster;
    s.targets.push_back(t);
  }
  int irq = 40;
  for (int d = Pick(rng, 0, 2); d > 0; --d) {
    std::string dev = absl::StrCat("eth", d);
    int device_node = Pick(rng, 0, nodes - 1);
    for (int q = Pick(rng, 1, 8) - 1; q >= 0; --q) {
      int node = Pick(rng, 0, nodes - 1);
      IrqSample sample =
          MakeNicIrq(s, irq++, dev, q, device_node, s.topology.nodes[node].cpus,
                     Pick(rng, 0, 20'000));
      sample.managed = Pick(rng, 0, 9) == 0;
      s.irqs.push_back(sample);
    }
  }
  for (CpuSample& cpu : s.cpus) {
    cpu.softirq_ns[kSoftirqNetRx] = Pick(rng, 0, 5'000'000);
  }
  if (Pick(rng, 0, 1) == 1) AddHaproxy(s, kHaproxy, Pick(rng, 1, 8), rng);
  return s;
}

Target* FindTarget(Snapshot& s, int32_t pid) {
  for (Target& t : s.targets) {
    if (t.pid == pid) return &t;
  }
  return nullptr;
}

// What the actuators and the kernel make of a plan.
void Apply(Snapshot& s, const Plan& plan) {
  for (const Action& action : plan.actions) {
    if (const auto* pin = std::get_if<PinThread>(&action.op)) {
      Target* t = FindTarget(s, WorkerOf(*pin));
      ASSERT_NE(t, nullptr);
      for (ThreadSample& thread : t->threads) {
        if (thread.tid != pin->tid) continue;
        thread.allowed_cpus = pin->cpus;
        thread.cpu = pin->cpus[0];
        uint64_t total = 0;
        for (uint64_t& r : thread.runtime_ns) total += r, r = 0;
        thread.runtime_ns[pin->node] = total;
        thread.cross_node_migrations = 0;
      }
      SetFaultsFromPages(*t, pin->node);
    } else if (const auto* m = std::get_if<MigratePages>(&action.op)) {
      Target* t = FindTarget(s, m->pid);
      ASSERT_NE(t, nullptr);
      uint64_t pages = m->max_bytes / t->page_size;
      for (size_t n = 0; n < t->resident_pages.size() && pages > 0; ++n) {
        if (static_cast<int>(n) == m->to_node) continue;
        if (absl::c_linear_search(m->leave_nodes, n)) continue;
        uint64_t moved = std::min(pages, t->resident_pages[n]);
        t->resident_pages[n] -= moved;
        t->resident_pages[m->to_node] += moved;
        s.topology.nodes[n].mem_free_bytes += moved * t->page_size;
        s.topology.nodes[m->to_node].mem_free_bytes -= moved * t->page_size;
        pages -= moved;
      }
      SetFaultsFromPages(*t, RunNode(*t));
    } else if (const auto* i = std::get_if<SetIrqAffinity>(&action.op)) {
      for (IrqSample& irq : s.irqs) {
        if (irq.irq != i->irq) continue;
        uint64_t total = 0;
        for (uint64_t& c : irq.count_per_cpu) total += c, c = 0;
        irq.count_per_cpu[i->cpus[0]] = total;
        irq.affinity = i->cpus;
        irq.effective = {i->cpus[0]};
      }
    }
  }
}

// Changes that stay inside the hysteresis band of a converged host: sizes of
// counters and softirq time, NET_RX scaled alike for all workers (the split
// between nodes is what matters; wobbles in the split are the IRQ band
// scenarios in decide_test.cc), pages shuffled among the nodes that are
// neither a worker's home nor where it runs, and on the same side of the
// top tier's edge (a lower tier's pages count nowhere).
Snapshot Noisy(const Snapshot& base, const History& history,
               std::mt19937& rng) {
  Snapshot s = base;
  std::uniform_real_distribution<double> scale(0.5, 1.5);
  const double rx = scale(rng);
  for (CpuSample& cpu : s.cpus) {
    cpu.softirq_ns[kSoftirqNetRx] = Pick(rng, 0, 5'000'000);
  }
  for (IrqSample& irq : s.irqs) {
    for (uint64_t& c : irq.count_per_cpu) c = c * scale(rng);
  }
  for (Target& t : s.targets) {
    double k = scale(rng);
    for (uint64_t& r : t.threads[0].runtime_ns) r = r * k;
    t.threads[0].net_rx_softirq_ns = t.threads[0].net_rx_softirq_ns * rx;
    // Pages move only among nodes that are neither its home nor where it
    // runs, so neither its remote share nor its local faults change.
    const EntityHistory* placed = history.Find({EntityKind::kTask, t.pid});
    if (placed == nullptr) continue;
    int run = RunNode(t);
    std::vector<int> others;
    const std::vector<char> lower = LowerTierNodes(s.topology);
    const bool among_lower = Pick(rng, 0, 1) == 1;
    for (size_t n = 0; n < t.resident_pages.size(); ++n) {
      if (static_cast<int>(n) != placed->node && static_cast<int>(n) != run &&
          (n < lower.size() && lower[n]) == among_lower) {
        others.push_back(n);
      }
    }
    if (others.size() >= 2) {
      int from = others[Pick(rng, 0, others.size() - 1)];
      int to = others[Pick(rng, 0, others.size() - 1)];
      uint64_t moved = t.resident_pages[from] / 2;
      t.resident_pages[from] -= moved;
      t.resident_pages[to] += moved;
      SetFaultsFromPages(t, run);
    }
  }
  return s;
}

std::string Describe(const Plan& plan) {
  std::vector<std::string> lines;
  for (const Action& a : plan.actions) lines.push_back(a.reason);
  for (const std::string& n : plan.notes) lines.push_back("note: " + n);
  return absl::StrJoin(lines, "\n");
}

// Whether `a` carries on a migration under way: pages moved to the same node
// within the dwell time, not settled since. Those are the rest of a move that
// passed min_gain when it started, so they may each gain less.
bool Finishing(const Snapshot& s, const v1::Policy& p, const History& h,
               const Action& a) {
  const auto* m = std::get_if<MigratePages>(&a.op);
  const EntityHistory* e = m ? h.Find(KeyOf(a)) : nullptr;
  return e != nullptr && !e->settled() && e->node == m->to_node &&
         s.now_ns < e->last_move_ns + p.stability().dwell_s() * kSecond;
}

// The plan's budgets, checked against the snapshot it was made from (and the
// history it was decided with).
void CheckBudgets(const Snapshot& s, const v1::Policy& p, const History& h,
                  const Plan& plan) {
  std::set<EntityKey, bool (*)(const EntityKey&, const EntityKey&)> moved(
      [](const EntityKey& a, const EntityKey& b) {
        return std::make_pair(a.kind, a.id) < std::make_pair(b.kind, b.id);
      });
  uint64_t bytes = 0;
  std::map<int, uint64_t> to_node;
  std::vector<int> placement_cpus = *ParseCpuList(p.placement().cpus());
  std::vector<int> irq_cpus = *ParseCpuList(p.irqs().cpus());
  const std::vector<char> lower = LowerTierNodes(s.topology);
  std::vector<int> lower_ids;
  for (size_t n = 0; n < lower.size(); ++n) {
    if (lower[n]) lower_ids.push_back(s.topology.nodes[n].id);
  }
  std::set<int32_t> targeted;             // workers: pids, thread workers' tids
  std::map<int32_t, int32_t> process_of;  // thread worker -> its process
  for (const Target& t : s.targets) {
    if ((t.comm == "nginx" || t.comm == "haproxy") &&
        t.role == TargetRole::kWorker) {
      targeted.insert(t.pid);
      if (t.process != 0) process_of[t.pid] = t.process;
    }
  }
  for (const Action& a : plan.actions) {
    moved.insert(KeyOf(a));
    EXPECT_FALSE(a.reason.empty());
    if (!Finishing(s, p, h, a)) {
      EXPECT_GE(a.expected_gain, p.stability().min_gain()) << a.reason;
    }
    if (const auto* pin = std::get_if<PinThread>(&a.op)) {
      EXPECT_TRUE(targeted.count(WorkerOf(*pin))) << a.reason;
      auto thread = process_of.find(WorkerOf(*pin));
      EXPECT_EQ(pin->thread_worker, thread != process_of.end()) << a.reason;
      if (thread != process_of.end()) {
        EXPECT_EQ(pin->pid, thread->second) << a.reason;
      }
      ASSERT_FALSE(pin->cpus.empty());
      for (int cpu : pin->cpus) {
        EXPECT_EQ(s.topology.cpu_node[cpu], pin->node) << a.reason;
        if (!placement_cpus.empty()) {
          EXPECT_TRUE(
              std::count(placement_cpus.begin(), placement_cpus.end(), cpu))
              << a.reason;
        }
      }
    } else if (const auto* m = std::get_if<MigratePages>(&a.op)) {
      EXPECT_TRUE(targeted.count(m->pid)) << a.reason;
      EXPECT_NE(m->pid, kHaproxy) << "a thread worker's memory: " << a.reason;
      EXPECT_NE(m->pid, kHaproxyReloaded) << a.reason;
      EXPECT_GT(m->max_bytes, 0u);
      // Never to a lower tier, never from one (a node without CPUs is
      // never a home).
      EXPECT_FALSE(s.topology.nodes[m->to_node].cpus.empty()) << a.reason;
      EXPECT_EQ(m->leave_nodes, lower_ids) << a.reason;
      bytes += m->max_bytes;
      to_node[m->to_node] += m->max_bytes;
    } else if (const auto* i = std::get_if<SetIrqAffinity>(&a.op)) {
      ASSERT_EQ(i->cpus.size(), 1u);
      if (!irq_cpus.empty()) {
        EXPECT_TRUE(std::count(irq_cpus.begin(), irq_cpus.end(), i->cpus[0]));
      }
      for (const IrqSample& irq : s.irqs) {
        if (irq.irq == i->irq) {
          EXPECT_FALSE(irq.managed);
        }
      }
    }
  }
  EXPECT_LE(moved.size(), p.stability().max_moves_per_tick()) << Describe(plan);
  EXPECT_LE(bytes, uint64_t{p.memory().budget_mb_per_s()} << 20)
      << Describe(plan);
  for (const auto& [node, b] : to_node) {
    const Node& n = s.topology.nodes[node];
    uint64_t reserve = n.mem_total_bytes / 100 * p.memory().reserve_free_pct();
    EXPECT_LE(b + reserve, n.mem_free_bytes) << Describe(plan);
  }
}

struct Moved {
  int node;
  uint64_t at_ns;
};

int NodeOf(const Snapshot& s, const Action& a) {
  if (const auto* pin = std::get_if<PinThread>(&a.op)) return pin->node;
  if (const auto* m = std::get_if<MigratePages>(&a.op)) return m->to_node;
  return s.topology.cpu_node[std::get<SetIrqAffinity>(a.op).cpus[0]];
}

TEST(DecidePropertyTest, BudgetsNoPingPongConvergenceAndNoiseImmunity) {
  // Enough for the slowest generated case: GiBs of pages off home moved
  // all the way home at 1 MiB/s.
  constexpr int kMaxTicks = 10000;
  int converged_with_moves = 0;
  int thread_pins = 0;  // of thread workers, new process's included
  int reloads = 0;
  int lower_tier_hosts = 0;
  for (int seed = 1; seed <= kCases; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    std::mt19937 rng(seed);
    Snapshot s = RandomSnapshot(rng);
    lower_tier_hosts += absl::c_count(LowerTierNodes(s.topology), 1) > 0;
    v1::Policy policy =
        RandomPolicy(rng, static_cast<int>(s.topology.cpu_node.size()));
    const uint64_t dwell_ns = policy.stability().dwell_s() * kSecond;
    History history;
    std::map<std::pair<EntityKind, int32_t>, Moved> last;
    int quiet = 0;
    int tick = 0;
    int moves = 0;
    const int reload_at = Pick(rng, 1, 40);
    // Until quiet for longer than the dwell time: then nothing is waiting.
    // A reload changes the consumers of the NIC's IRQs: one moved away
    // from where they now are is left there for hold_down_s (anti
    // ping-pong), after which the plan is the one a fresh agent makes.
    uint64_t settle_until = 0;
    for (; tick < kMaxTicks &&
           (quiet <= static_cast<int>(policy.stability().dwell_s()) + 1 ||
            s.now_ns < settle_until);
         ++tick) {
      Plan plan = Decide(s, policy, history);
      CheckBudgets(s, policy, history, plan);
      if (::testing::Test::HasFailure()) return;
      for (const Action& a : plan.actions) {
        EntityKey key = KeyOf(a);
        int node = NodeOf(s, a);
        auto it = last.find({key.kind, key.id});
        if (it != last.end() && it->second.node != node) {
          ASSERT_GE(s.now_ns - it->second.at_ns, dwell_ns)
              << "reverse move within dwell: " << a.reason;
        }
        last[{key.kind, key.id}] = {node, s.now_ns};
        const auto* pin = std::get_if<PinThread>(&a.op);
        thread_pins += pin != nullptr && pin->thread_worker;
        RecordApplied(history, a, s.topology, s.now_ns);
      }
      Apply(s, plan);
      quiet = plan.actions.empty() ? quiet + 1 : 0;
      if (tick == reload_at) {
        ReloadHaproxy(s, rng);
        ++reloads;
        quiet = 0;
        settle_until = s.now_ns + policy.stability().hold_down_s() * kSecond;
      }
      moves += static_cast<int>(plan.actions.size());
      s.now_ns += s.tick_ns;
    }
    ASSERT_LT(tick, kMaxTicks)
        << "no convergence: " << Describe(Decide(s, policy, history));
    if (moves > 0) ++converged_with_moves;

    // Converged: empty plan, with the history and without it.
    Plan again = Decide(s, policy, history);
    EXPECT_TRUE(again.actions.empty()) << Describe(again);
    Plan fresh = Decide(s, policy, History());
    EXPECT_TRUE(fresh.actions.empty()) << Describe(fresh);

    // Two noisy versions of the converged host, alternating.
    Snapshot a = Noisy(s, history, rng);
    Snapshot b = Noisy(s, history, rng);
    for (int i = 0; i < 2 * static_cast<int>(policy.stability().dwell_s());
         ++i) {
      Snapshot& now = i % 2 == 0 ? a : b;
      now.now_ns = s.now_ns + i * s.tick_ns;
      Plan noisy = Decide(now, policy, history);
      ASSERT_TRUE(noisy.actions.empty()) << "tick " << i << "\n"
                                         << Describe(noisy);
    }
  }
  // The generator must exercise moves, not just converged hosts.
  EXPECT_GT(converged_with_moves, kCases / 2);
  EXPECT_GT(thread_pins, kCases / 4);
  EXPECT_GT(reloads, kCases / 8);
  EXPECT_GT(lower_tier_hosts, kCases / 8);
}

// Snapshots torn or inconsistent (hotplug mid-read, a sensor's short vector):
// Decide must neither crash nor name a CPU the host does not have.
TEST(DecidePropertyTest, MalformedSnapshotsAreSurvived) {
  for (int seed = 1; seed <= kCases; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    std::mt19937 rng(seed);
    Snapshot s = RandomSnapshot(rng);
    v1::Policy policy =
        RandomPolicy(rng, static_cast<int>(s.topology.cpu_node.size()));
    for (int k = Pick(rng, 1, 6); k > 0; --k) {
      switch (Pick(rng, 0, 9)) {
        case 0:
          if (!s.topology.cpu_node.empty()) s.topology.cpu_node.pop_back();
          break;
        case 1:
          s.topology.nodes[Pick(rng, 0, s.topology.nodes.size() - 1)]
              .cpus.push_back(Pick(rng, 0, 500));
          break;
        case 2:
          s.topology.nodes.back().id = PickOf(rng, {-1, 0, 1000});
          break;
        case 3:
          for (Target& t : s.targets) {
            if (!t.threads.empty()) t.threads[0].runtime_ns.resize(1);
          }
          break;
        case 4:
          for (Target& t : s.targets) t.resident_pages.clear();
          break;
        case 5:
          for (Target& t : s.targets) {
            if (Pick(rng, 0, 1)) t.threads.clear();
          }
          break;
        case 6:
          for (IrqSample& irq : s.irqs) {
            irq.count_per_cpu.resize(Pick(rng, 0, 3));
            irq.affinity.push_back(Pick(rng, -5, 500));
          }
          break;
        case 7:
          for (Target& t : s.targets) {
            for (ThreadSample& th : t.threads) {
              th.cpu = Pick(rng, -5, 500);
              th.allowed_cpus.push_back(Pick(rng, -5, 500));
              th.faults.resize(Pick(rng, 0, 12));
            }
          }
          break;
        case 8:
          s.cpus.resize(Pick(rng, 0, 3));
          s.tick_ns = PickOf(rng, {uint64_t{0}, uint64_t{1}, kSecond});
          break;
        case 9:
          s.topology.nodes[0].distances.clear();
          s.topology.cpu_node[0] = 77;
          break;
      }
    }
    Plan plan = Decide(s, policy, History());
    for (const Action& a : plan.actions) {
      std::vector<int> cpus;
      if (const auto* pin = std::get_if<PinThread>(&a.op)) cpus = pin->cpus;
      if (const auto* irq = std::get_if<SetIrqAffinity>(&a.op)) {
        cpus = irq->cpus;
      }
      for (int cpu : cpus) {
        ASSERT_GE(cpu, 0) << a.reason;
        ASSERT_LT(cpu, static_cast<int>(s.topology.cpu_node.size()))
            << a.reason;
      }
    }
  }
}

}  // namespace
}  // namespace locus
