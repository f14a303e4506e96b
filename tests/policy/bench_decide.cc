// Decide() over 1k, 10k and 100k tasks on an 8-node, 64-CPU host. Target:
// <= 5 ms at 10k tasks, linear growth. Run from a Release/RelWithDebInfo
// build: build/tests/policy/bench_decide
#include <random>

#include "benchmark/benchmark.h"
#include "policy/decide.h"
#include "policy/default_policy.h"
#include "tests/common/snapshot_builder.h"

namespace locus {
namespace {

using testing::MakeHost;
using testing::MakeNicIrq;
using testing::MakeWorker;
using testing::SetFaultsFromPages;

// A busy host: most workers settled, a third of them misplaced in one way or
// another (unpinned and wandering, memory on the wrong node), 4 NICs of 16
// queues with half the IRQs on the wrong node.
Snapshot BusyHost(int tasks) {
  constexpr int kNodes = 8;
  Snapshot s = MakeHost(kNodes, 8);
  std::mt19937 rng(42);
  s.targets.reserve(tasks);
  for (int i = 0; i < tasks; ++i) {
    int home = i % kNodes;
    int kind = static_cast<int>(rng() % 3);
    Target t;
    if (kind == 0) {
      t = MakeWorker(s, 1000 + i, home, home, home);
    } else if (kind == 1) {
      t = MakeWorker(s, 1000 + i, home, -1, home);
      t.threads[0].runtime_ns[(home + 1) % kNodes] = 200'000'000;
      t.threads[0].cross_node_migrations = rng() % 50;
    } else {
      t = MakeWorker(s, 1000 + i, home, home, (home + 3) % kNodes);
      t.resident_pages[home] = 5000;
    }
    SetFaultsFromPages(t, home);
    s.targets.push_back(std::move(t));
  }
  int irq = 100;
  for (int nic = 0; nic < 4; ++nic) {
    for (int q = 0; q < 16; ++q) {
      int node = q % 2 == 0 ? nic : (nic + 4) % kNodes;
      s.irqs.push_back(MakeNicIrq(s, irq++, "eth" + std::to_string(nic), q, nic,
                                  s.topology.nodes[node].cpus));
    }
  }
  return s;
}

void BM_Decide(benchmark::State& state) {
  Snapshot snapshot = BusyHost(static_cast<int>(state.range(0)));
  v1::Policy policy = DefaultPolicy();
  History history;
  size_t actions = 0;
  for (auto _ : state) {
    Plan plan = Decide(snapshot, policy, history);
    actions = plan.actions.size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["actions"] = static_cast<double>(actions);
  state.SetComplexityN(state.range(0));
}
// The floor under Decide(): one read of every sample Decide looks at, in
// the snapshot's order, and nothing else.
void BM_ReadSamples(benchmark::State& state) {
  Snapshot snapshot = BusyHost(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    uint64_t sum = 0;
    for (const Target& t : snapshot.targets) {
      for (const ThreadSample& th : t.threads) {
        for (uint64_t r : th.runtime_ns) sum += r;
        for (const NodeFaults& f : th.faults) sum += f.local + f.remote;
        for (int cpu : th.allowed_cpus) sum += cpu;
      }
      for (uint64_t p : t.resident_pages) sum += p;
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_ReadSamples)
    ->Arg(1'000)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

BENCHMARK(BM_Decide)
    ->Arg(1'000)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

}  // namespace
}  // namespace locus
