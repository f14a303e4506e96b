// Costs on the control loop's side of the stream, at the scale of
// 1k target threads: building the message, publishing it to N subscribers,
// and one subscriber's copy (paid on its gRPC thread, not the loop's).
//   build-*/tests/agent/metrics_bench
#include <benchmark/benchmark.h>

#include "agent/api/metrics_hub.h"
#include "agent/daemon/metrics_convert.h"

namespace locus {
namespace {

Snapshot Synthetic(int threads) {
  Snapshot s;
  s.topology.nodes = {{.id = 0, .cpus = {0, 1}, .distances = {}},
                      {.id = 1, .cpus = {2, 3}, .distances = {}}};
  s.topology.cpu_node = {0, 0, 1, 1};
  s.cpus.resize(4);
  Target t;
  t.pid = 1000;
  t.comm = "nginx";
  t.role = TargetRole::kWorker;
  for (int i = 0; i < threads; ++i) {
    ThreadSample th;
    th.tid = 1000 + i;
    th.cpu = i % 4;
    th.allowed_cpus = {0, 1, 2, 3};
    th.faults = {{.local = 10, .remote = 3}, {.local = 4, .remote = 1}};
    t.threads.push_back(th);
  }
  s.targets = {t};
  return s;
}

void BM_FillMetrics(benchmark::State& state) {
  Snapshot s = Synthetic(static_cast<int>(state.range(0)));
  uint64_t tick = 0;
  for (auto _ : state) {
    v1::Metrics m;
    FillMetricsFromSnapshot(s, ++tick, 0, &m);
    benchmark::DoNotOptimize(m);
  }
  v1::Metrics m;
  FillMetricsFromSnapshot(s, 1, 0, &m);
  state.counters["bytes"] = static_cast<double>(m.ByteSizeLong());
}
BENCHMARK(BM_FillMetrics)->Arg(1000);

void BM_Publish(benchmark::State& state) {
  v1::Metrics m;
  FillMetricsFromSnapshot(Synthetic(1000), 1, 0, &m);
  MetricsHub hub(MetricsHubOptions{.queue_depth = 4, .max_subscribers = 64});
  std::vector<std::unique_ptr<MetricsSubscription>> subs;
  for (int i = 0; i < state.range(0); ++i) subs.push_back(*hub.Subscribe());
  for (auto _ : state) {
    // The loop hands its message over; the copy here stands for building it.
    state.PauseTiming();
    v1::Metrics copy = m;
    state.ResumeTiming();
    hub.Publish(std::move(copy));
  }
}
BENCHMARK(BM_Publish)->Arg(0)->Arg(1)->Arg(16);

void BM_SubscriberNext(benchmark::State& state) {
  v1::Metrics m;
  FillMetricsFromSnapshot(Synthetic(1000), 1, 0, &m);
  MetricsHub hub;
  auto sub = *hub.Subscribe();
  for (auto _ : state) {
    state.PauseTiming();
    hub.Publish(m);
    state.ResumeTiming();
    benchmark::DoNotOptimize(sub->Next(absl::ZeroDuration()));
  }
}
BENCHMARK(BM_SubscriberNext);

}  // namespace
}  // namespace locus

BENCHMARK_MAIN();
