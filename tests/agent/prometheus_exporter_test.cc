// The Prometheus registry fed with a busy host's ticks: counters are the
// sums of the per-tick deltas and never go down, series are bounded by
// nodes and IRQs (not threads), and the endpoint and textfile serve it.
#include "agent/api/prometheus_exporter.h"

#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>

#include "absl/strings/match.h"
#include "agent/api/metrics_export.h"
#include "gtest/gtest.h"
#include "prometheus/metric_family.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/realistic_metrics.h"
#include "tests/agent/scrape.h"

namespace locus {
namespace {

using Series = std::map<std::string, double>;  // "name{k=v,...}" -> value

std::string Key(const std::string& name,
                const std::vector<prometheus::ClientMetric::Label>& labels) {
  std::string key = name + "{";
  for (const auto& label : labels) key += label.name + "=" + label.value + ",";
  return key + "}";
}

// Every counter's and gauge's value (histograms: their count).
Series Collect(const PrometheusExporter& exporter) {
  Series out;
  for (const auto& family : exporter.registry()->Collect()) {
    for (const auto& metric : family.metric) {
      double value = metric.gauge.value;
      if (family.type == prometheus::MetricType::Counter) {
        value = metric.counter.value;
      } else if (family.type == prometheus::MetricType::Histogram) {
        value = static_cast<double>(metric.histogram.sample_count);
      }
      out[Key(family.name, metric.label)] = value;
    }
  }
  return out;
}

Series RunTicks(PrometheusExporter& exporter, int ticks, RealisticShape shape) {
  for (int t = 1; t <= ticks; ++t) {
    exporter.Observe(RealisticMetrics(t, shape), RealisticStatus(t, shape));
  }
  return Collect(exporter);
}

TEST(PrometheusExporterTest, CountersSumTheTicksDeltas) {
  PrometheusExporter exporter({"1.2.3", "6.1.0"});
  Series s = RunTicks(exporter, 10, {});
  EXPECT_EQ(s["locus_numa_faults_total{locality=local,node=0,}"], 9000);
  // Node 1 has no faults every fifth tick.
  EXPECT_EQ(s["locus_numa_faults_total{locality=remote,node=1,}"], 800);
  EXPECT_EQ(s["locus_actions_total{kind=pin_thread,outcome=applied,}"], 9);
  EXPECT_EQ(s["locus_actions_total{kind=pin_thread,outcome=task_gone,}"], 1);
  EXPECT_EQ(s["locus_pages_migrated_bytes_total{from_node=1,to_node=0,}"],
            5 * (4 << 20));
  EXPECT_EQ(s["locus_pages_migrated_bytes_total{from_node=unknown,to_node=0,}"],
            5 * (4 << 20));
  EXPECT_EQ(s["locus_reverts_total{}"], 1);
  EXPECT_EQ(s["locus_external_changes_total{kind=irq_affinity,}"], 1);
  EXPECT_EQ(s["locus_tick_overruns_total{}"], 1);
  EXPECT_EQ(s["locus_tick_duration_seconds{}"], 10);
  EXPECT_DOUBLE_EQ(s["locus_tick_cpu_seconds_total{}"], 9 * 0.005 + 0.050);
  EXPECT_EQ(s["locus_sensor_events_dropped_total{sensor=numa,}"], 20);
  EXPECT_EQ(s["locus_target_resident_bytes{node=0,}"], 1 << 30);
  EXPECT_EQ(s["locus_sensor_events_dropped_total{sensor=sched,}"], 10);
  EXPECT_EQ(s["locus_policy_reload_total{result=ok,}"], 1);
  EXPECT_EQ(s["locus_policy_reload_total{result=rejected,}"], 1);
  EXPECT_EQ(s["locus_policy_version{}"], 2);
  EXPECT_EQ(s["locus_acting{}"], 1);
  EXPECT_EQ(s["locus_journal_entries{}"], 10);
  EXPECT_EQ(s["locus_target_processes{}"], 100);
  EXPECT_EQ(s["locus_build_info{kernel=6.1.0,version=1.2.3,}"], 1);
  // IRQ 100's device is on node 0; its 50 per tick land on CPU 0 (node 0),
  // one each on the 15 others, 7 of them on node 0.
  EXPECT_EQ(s["locus_irq_interrupts_total{irq=100,locality=local,}"],
            10 * (50 + 7));
  EXPECT_EQ(s["locus_irq_interrupts_total{irq=100,locality=remote,}"], 80);
}

TEST(PrometheusExporterTest, CountersNeverGoDown) {
  PrometheusExporter exporter({"1", "k"});
  RealisticShape shape;
  Series before;
  for (int t = 1; t <= 12; ++t) {
    exporter.Observe(RealisticMetrics(t, shape), RealisticStatus(t, shape));
    Series now = Collect(exporter);
    for (const auto& [key, value] : before) {
      if (!absl::StrContains(key, "_total{")) continue;
      auto it = now.find(key);
      // A counter only disappears with its entity (an IRQ gone).
      if (it != now.end()) {
        EXPECT_GE(it->second, value) << key << " tick " << t;
      }
    }
    before = std::move(now);
  }
}

TEST(PrometheusExporterTest, SeriesAreBoundedByNodesAndIrqsNotThreads) {
  PrometheusExporter few({"1", "k"});
  PrometheusExporter many({"1", "k"});
  Series a = RunTicks(few, 6, {.nodes = 4, .threads = 10, .irqs = 8});
  Series b = RunTicks(many, 6, {.nodes = 4, .threads = 5000, .irqs = 8});
  EXPECT_EQ(a.size(), b.size());
  for (const auto& [key, value] : b) {
    EXPECT_FALSE(absl::StrContains(key, "tid=") ||
                 absl::StrContains(key, "pid=") ||
                 absl::StrContains(key, "comm="))
        << key;
  }
  EXPECT_EQ(b["locus_target_threads{node=0,}"] +
                b["locus_target_threads{node=1,}"] +
                b["locus_target_threads{node=2,}"] +
                b["locus_target_threads{node=3,}"] +
                b["locus_target_threads{node=unknown,}"],
            5000);
}

TEST(PrometheusExporterTest, GoneSourcesAndIrqsLoseTheirSeries) {
  PrometheusExporter exporter({"1", "k"});
  RealisticShape shape{.nodes = 2, .threads = 10, .irqs = 4};
  Series s = RunTicks(exporter, 4, shape);
  EXPECT_EQ(s.count("locus_sensor_up{sensor=numa_faults,source=iter_task,}"),
            1);
  EXPECT_EQ(s.count("locus_irq_interrupts_total{irq=103,locality=local,}"), 1);
  v1::Metrics fewer = RealisticMetrics(5, shape);
  fewer.mutable_irqs()->RemoveLast();
  exporter.Observe(fewer, RealisticStatus(5, shape));
  s = Collect(exporter);
  EXPECT_EQ(s.count("locus_sensor_up{sensor=numa_faults,source=iter_task,}"),
            0);
  EXPECT_EQ(s["locus_sensor_up{sensor=numa_faults,source=procfs,}"], 1);
  EXPECT_EQ(s.count("locus_irq_interrupts_total{irq=103,locality=local,}"), 0);
}

TEST(PrometheusExporterTest, RatioIsNotANumberInATickWithoutFaults) {
  PrometheusExporter exporter({"1", "k"});
  Series s = RunTicks(exporter, 5, {.nodes = 2, .threads = 10, .irqs = 1});
  EXPECT_TRUE(std::isnan(s["locus_node_local_fault_ratio{node=1,}"]));
  EXPECT_DOUBLE_EQ(s["locus_node_local_fault_ratio{node=0,}"], 0.9);
}

TEST(PrometheusExporterTest, HomeTimeAndRunqueueWaitByNode) {
  PrometheusExporter exporter({"1", "k"});
  RealisticShape shape{.nodes = 2, .threads = 0, .irqs = 0};
  v1::Metrics m = RealisticMetrics(1, shape);
  m.mutable_nodes(0)->set_runqueue_wait_s(0.018);
  // Two workers homed on node 0: one all at home (100 ms), one widened,
  // a quarter of its 300 ms at home; one thread with no home.
  for (auto [ratio, run, home] :
       {std::tuple{1.0, 100, 0}, std::tuple{0.25, 300, 0},
        std::tuple{-1.0, 500, -1}}) {
    v1::TaskMetrics* task = m.add_tasks();
    task->set_home_time_ratio(ratio);
    task->set_runtime_ns(run * 1'000'000ull);
    task->set_home_node(home);
  }
  exporter.Observe(m, RealisticStatus(1, shape));
  Series s = Collect(exporter);
  EXPECT_DOUBLE_EQ(s["locus_node_runqueue_wait_seconds{node=0,}"], 0.018);
  // (100 + 75) ms at home of 400 ms.
  EXPECT_DOUBLE_EQ(s["locus_worker_home_time_ratio{node=0,}"], 0.4375);
  EXPECT_DOUBLE_EQ(s["locus_worker_home_time_ratio{node=1,}"], 1.0);
}

TEST(PrometheusExporterTest, WorkerMemoryByHomeAndNode) {
  PrometheusExporter exporter({"1", "k"});
  RealisticShape shape{.nodes = 2, .threads = 0, .irqs = 0};
  v1::AgentStatus status = RealisticStatus(1, shape);
  for (int id : {0, 1})
    status.mutable_memory_tiering()->add_nodes()->set_node(id);
  // Workers 10 and 11 homed on node 1, 20 without a home.
  for (auto [pid, home] : {std::pair{10, 1}, {11, 1}, {20, -1}}) {
    v1::WorkerMemory* w = status.add_worker_memory();
    w->set_pid(pid);
    w->set_home_node(home);
    w->add_resident_bytes(pid * 1000);
    w->add_resident_bytes(pid * 2000);
  }
  exporter.Observe(RealisticMetrics(1, shape), status);
  Series s = Collect(exporter);
  EXPECT_EQ(s["locus_worker_resident_bytes{home=1,node=0,}"], 21'000);
  EXPECT_EQ(s["locus_worker_resident_bytes{home=1,node=1,}"], 42'000);
  EXPECT_EQ(s["locus_worker_resident_bytes{home=none,node=1,}"], 40'000);
  EXPECT_EQ(s["locus_worker_resident_bytes{home=0,node=0,}"], 0);
  // A home that lost its workers reads 0, not its last figure.
  status.clear_worker_memory();
  exporter.Observe(RealisticMetrics(2, shape), status);
  EXPECT_EQ(Collect(exporter)["locus_worker_resident_bytes{home=1,node=1,}"],
            0);
}

TEST(PrometheusExporterTest, NotActingWhenTheJournalFailsOrInDryRun) {
  PrometheusExporter exporter({"1", "k"});
  RealisticShape shape{.nodes = 1, .threads = 1, .irqs = 0};
  v1::AgentStatus status = RealisticStatus(1, shape);
  status.set_journal_error("journal not writable: Read-only file system");
  exporter.Observe(RealisticMetrics(1, shape), status);
  EXPECT_EQ(Collect(exporter)["locus_acting{}"], 0);
  v1::Metrics dry = RealisticMetrics(2, shape);
  dry.set_mode(v1::AGENT_MODE_DRY_RUN);
  exporter.Observe(dry, RealisticStatus(2, shape));
  Series s = Collect(exporter);
  EXPECT_EQ(s["locus_acting{}"], 0);
  EXPECT_EQ(s["locus_dry_run{}"], 1);
}

MetricsExportOptions ListenOn(const std::string& address) {
  MetricsExportOptions options;
  options.listen = address;
  return options;
}

MetricsExportOptions TextfileAt(const std::string& path) {
  MetricsExportOptions options;
  options.textfile = path;
  return options;
}

TEST(MetricsExportTest, ServesTheRegistryOverLoopback) {
  auto started = MetricsExport::Start(ListenOn("127.0.0.1:0"), {"1", "k"});
  ASSERT_TRUE(started.ok()) << started.status();
  MetricsExport& out = **started;
  ASSERT_GT(out.port(), 0);
  RealisticShape shape{.nodes = 2, .threads = 100, .irqs = 4};
  out.Observe(RealisticMetrics(1, shape), RealisticStatus(1, shape));
  std::string body = Scrape(out.port());
  EXPECT_TRUE(absl::StrContains(body, "# TYPE locus_actions_total counter"));
  EXPECT_TRUE(
      absl::StrContains(body, "# TYPE locus_tick_duration_seconds histogram"));
  EXPECT_TRUE(absl::StrContains(body, "locus_tick_duration_seconds_bucket{"));
  EXPECT_TRUE(absl::StrContains(body, "# TYPE locus_acting gauge"));
  EXPECT_TRUE(absl::StrContains(
      body, "locus_numa_faults_total{locality=\"local\",node=\"0\"} 900"));
}

TEST(MetricsExportTest, RefusesABadOrTakenAddress) {
  for (const char* bad : {"9477", "localhost:9477", "127.0.0.1:65536",
                          "127.0.0.1:", "[::1:9477", "::1:9477"}) {
    auto started = MetricsExport::Start(ListenOn(bad), {"1", "k"});
    EXPECT_EQ(started.status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
    EXPECT_TRUE(absl::StrContains(started.status().message(), bad)) << bad;
  }
  auto first = MetricsExport::Start(ListenOn("127.0.0.1:0"), {"1", "k"});
  ASSERT_TRUE(first.ok()) << first.status();
  std::string taken = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = MetricsExport::Start(ListenOn(taken), {"1", "k"});
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(second.status().message(), taken));
}

TEST(MetricsExportTest, TextfileIsReplacedWholeAndReadable) {
  TempDir dir;
  std::string path = dir.File("locus.prom");
  auto started = MetricsExport::Start(TextfileAt(path), {"1", "k"});
  ASSERT_TRUE(started.ok()) << started.status();
  RealisticShape shape{.nodes = 2, .threads = 10, .irqs = 2};
  (*started)->Observe(RealisticMetrics(1, shape), RealisticStatus(1, shape));
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "locus.prom");
  }
  EXPECT_EQ(files, 1);  // no temporary left behind
  std::string missing = dir.File("no/such/dir/locus.prom");
  auto refused = MetricsExport::Start(TextfileAt(missing), {"1", "k"});
  EXPECT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), missing));
}

TEST(PrometheusExporterTest, ConnectionsSumOverGroupsByNodeAndPath) {
  PrometheusExporter exporter({"1", "k"});
  v1::Metrics metrics;
  for (int g = 0; g < 2; ++g) {
    v1::ConnectionGroup* group = metrics.add_connections();
    group->set_steered(g == 0);
    v1::NodeConnections* node = group->add_nodes();
    node->set_node(1);
    node->set_local(100);
    node->set_spilled(5);
    node->set_fell_back(1);
  }
  exporter.Observe(metrics, v1::AgentStatus());
  exporter.Observe(metrics, v1::AgentStatus());
  Series s = Collect(exporter);
  EXPECT_EQ(s["locus_connections_total{node=1,path=local,}"], 400);
  EXPECT_EQ(s["locus_connections_total{node=1,path=spilled,}"], 20);
  EXPECT_EQ(s["locus_connections_total{node=1,path=fell_back,}"], 4);
  EXPECT_EQ(s["locus_connections_total{node=1,path=migrated,}"], 0);
  EXPECT_EQ(s["locus_connection_groups{state=steered,}"], 1);
  EXPECT_EQ(s["locus_connection_groups{state=not_steered,}"], 1);
}

TEST(PrometheusExporterTest, NeighboursSayWhatLocusHandedThem) {
  PrometheusExporter exporter({"1", "k"});
  Series s = RunTicks(exporter, 2, RealisticShape{2, 30, 64});
  EXPECT_EQ(s["locus_neighbour_running{neighbour=irqbalance,}"], 1);
  EXPECT_EQ(s["locus_neighbour_running{neighbour=numad,}"], 1);
  EXPECT_EQ(s["locus_neighbour_problem{neighbour=irqbalance,}"], 0);
  EXPECT_EQ(s["locus_irqbalance_banned_irqs{by=locus,}"], 2);
  EXPECT_EQ(s["locus_irqbalance_banned_irqs{by=others,}"], 1);
  EXPECT_EQ(s["locus_irqbalance_banned_irqs{by=pending,}"], 0);
  EXPECT_EQ(s["locus_numad_excluded_workers{}"], 3);

  v1::Metrics gone;
  v1::Neighbour* irqbalance = gone.add_neighbours();
  irqbalance->set_name("irqbalance");
  irqbalance->set_problem("no control socket");
  irqbalance->add_irqs_pending(100);
  exporter.Observe(gone, v1::AgentStatus());
  s = Collect(exporter);
  EXPECT_EQ(s["locus_neighbour_running{neighbour=irqbalance,}"], 0);
  EXPECT_EQ(s["locus_neighbour_problem{neighbour=irqbalance,}"], 1);
  EXPECT_EQ(s["locus_irqbalance_banned_irqs{by=locus,}"], 0);
  EXPECT_EQ(s["locus_irqbalance_banned_irqs{by=pending,}"], 1);
}

v1::Metrics TieredTick(int64_t promoted, int64_t demoted, uint32_t node1_cpus) {
  v1::Metrics m;
  v1::MemoryTiering* t = m.mutable_memory_tiering();
  for (int id : {0, 1, 2}) {
    v1::TierNode* node = t->add_nodes();
    node->set_node(id);
    node->set_tier(id < 2 ? 4 : 6);
    node->set_cpus(id == 0 ? 2 : id == 1 ? node1_cpus : 0);
    node->set_lower_tier(id == 2);
  }
  t->set_promoted_total(promoted);
  t->set_demoted_total(demoted);
  return m;
}

TEST(PrometheusExporterTest, NodeTiersAndTheKernelsTierMoves) {
  PrometheusExporter exporter({"1", "k"});
  exporter.Observe(TieredTick(100, -1, 2), v1::AgentStatus());
  Series s = Collect(exporter);
  EXPECT_EQ(s["locus_node_info{cpus=0,lower_tier=1,node=2,tier=6,}"], 1);
  EXPECT_EQ(s["locus_node_info{cpus=2,lower_tier=0,node=1,tier=4,}"], 1);
  EXPECT_EQ(s["locus_kernel_tier_pages_total{direction=promote,}"], 100);
  // A kernel without the demotion counters has no such series.
  EXPECT_EQ(s.count("locus_kernel_tier_pages_total{direction=demote,}"), 0u);

  // The counters follow the kernel's totals; a node whose CPUs went
  // offline keeps one info series, with its new labels.
  exporter.Observe(TieredTick(130, 50, 1), v1::AgentStatus());
  s = Collect(exporter);
  EXPECT_EQ(s["locus_kernel_tier_pages_total{direction=promote,}"], 130);
  EXPECT_EQ(s["locus_kernel_tier_pages_total{direction=demote,}"], 50);
  EXPECT_EQ(s.count("locus_node_info{cpus=2,lower_tier=0,node=1,tier=4,}"), 0u);
  EXPECT_EQ(s["locus_node_info{cpus=1,lower_tier=0,node=1,tier=4,}"], 1);
  int info = 0;
  for (const auto& [key, value] : s) {
    info += key.rfind("locus_node_info{", 0) == 0;
  }
  EXPECT_EQ(info, 3);
}

// A running experiment as the loop reports it each tick: no units, only its
// last interval in the series.
v1::ExperimentReport RunningExperiment(uint32_t intervals) {
  v1::ExperimentReport r;
  r.set_id("exp-1");
  r.set_state(v1::EXPERIMENT_STATE_RUNNING);
  r.set_intervals(intervals);
  r.set_treated(4);
  r.set_control(3);
  v1::ExperimentInterval* last = r.add_series();
  last->set_index(intervals - 1);
  last->set_treated_bytes_per_cpu_second(2.5e9);
  last->set_control_bytes_per_cpu_second(2.4e9);
  v1::ExperimentEstimate* work = r.mutable_work();
  work->set_valid(true);
  work->set_ratio(1.03);
  work->set_low(1.01);
  work->set_high(1.05);
  r.mutable_connections()->set_why_not("too few connections");
  r.set_guardrail_p(0.4);
  r.set_guardrail_bound(0.001);
  return r;
}

TEST(PrometheusExporterTest, ExperimentSeriesExistWhileItRuns) {
  PrometheusExporter exporter({"1", "k"});
  v1::Metrics m;
  exporter.Observe(m, v1::AgentStatus());
  Series s = Collect(exporter);
  EXPECT_EQ(s["locus_experiment_running{}"], 0);
  EXPECT_EQ(s.count("locus_experiment_intervals{}"), 0u);
  EXPECT_EQ(s["locus_experiments_ended_total{state=guardrail,}"], 0);
  EXPECT_EQ(s.count("locus_experiments_ended_total{state=done,}"), 1u);

  *m.mutable_experiment() = RunningExperiment(12);
  exporter.Observe(m, v1::AgentStatus());
  s = Collect(exporter);
  EXPECT_EQ(s["locus_experiment_running{}"], 1);
  EXPECT_EQ(s["locus_experiment_intervals{}"], 12);
  EXPECT_EQ(s["locus_experiment_units{arm=treated,}"], 4);
  EXPECT_EQ(s["locus_experiment_units{arm=control,}"], 3);
  EXPECT_EQ(s["locus_experiment_work_per_cpu_second{arm=treated,}"], 2.5e9);
  EXPECT_EQ(s["locus_experiment_work_per_cpu_second{arm=control,}"], 2.4e9);
  EXPECT_EQ(
      s["locus_experiment_estimate{bound=ratio,metric=bytes_per_cpu_second,}"],
      1.03);
  EXPECT_EQ(
      s["locus_experiment_estimate{bound=low,metric=bytes_per_cpu_second,}"],
      1.01);
  EXPECT_EQ(
      s["locus_experiment_estimate{bound=high,metric=bytes_per_cpu_second,}"],
      1.05);
  // Not estimable yet: absent rather than a ratio of 0.
  EXPECT_EQ(s.count("locus_experiment_estimate{bound=ratio,metric="
                    "connections_per_cpu_second,}"),
            0u);
  EXPECT_EQ(s.count("locus_experiment_estimate{bound=ratio,metric="
                    "p99_service_time,}"),
            0u);
  EXPECT_EQ(s["locus_experiment_guardrail_p{}"], 0.4);

  // What users feel, once estimable: p99 service time and run-queue wait.
  v1::ExperimentReport felt = RunningExperiment(12);
  felt.mutable_service_p99()->set_valid(true);
  felt.mutable_service_p99()->set_ratio(1.2);
  felt.mutable_service_p99()->set_high(1.4);
  felt.mutable_run_queue_wait()->set_valid(true);
  felt.mutable_run_queue_wait()->set_ratio(1.7);
  *m.mutable_experiment() = felt;
  exporter.Observe(m, v1::AgentStatus());
  s = Collect(exporter);
  EXPECT_EQ(
      s["locus_experiment_estimate{bound=ratio,metric=p99_service_time,}"],
      1.2);
  EXPECT_EQ(s["locus_experiment_estimate{bound=high,metric=p99_service_time,}"],
            1.4);
  EXPECT_EQ(s["locus_experiment_estimate{bound=ratio,metric="
              "run_queue_wait_per_cpu_second,}"],
            1.7);

  // The work estimate stops being valid, the connections' becomes so.
  v1::ExperimentReport next = RunningExperiment(13);
  next.mutable_work()->set_valid(false);
  next.mutable_connections()->set_valid(true);
  next.mutable_connections()->set_ratio(0.99);
  next.set_guardrail_bound(0);  // as before a first look
  *m.mutable_experiment() = next;
  exporter.Observe(m, v1::AgentStatus());
  s = Collect(exporter);
  EXPECT_EQ(s.count("locus_experiment_estimate{bound=ratio,metric="
                    "bytes_per_cpu_second,}"),
            0u);
  EXPECT_EQ(s["locus_experiment_estimate{bound=ratio,metric="
              "connections_per_cpu_second,}"],
            0.99);
  EXPECT_EQ(s.count("locus_experiment_guardrail_p{}"), 0u);
  EXPECT_EQ(s["locus_experiment_intervals{}"], 13);
}

TEST(PrometheusExporterTest, ExperimentEndIsCountedOnceAndItsSeriesGo) {
  PrometheusExporter exporter({"1", "k"});
  v1::Metrics m;
  *m.mutable_experiment() = RunningExperiment(30);
  exporter.Observe(m, v1::AgentStatus());
  m.mutable_experiment()->set_state(v1::EXPERIMENT_STATE_GUARDRAIL);
  // The ending report, seen on two ticks: one end.
  exporter.Observe(m, v1::AgentStatus());
  exporter.Observe(m, v1::AgentStatus());
  Series s = Collect(exporter);
  EXPECT_EQ(s["locus_experiment_running{}"], 0);
  EXPECT_EQ(s["locus_experiments_ended_total{state=guardrail,}"], 1);
  EXPECT_EQ(s["locus_experiments_ended_total{state=done,}"], 0);
  for (const auto& [key, value] : s) {
    bool running_series = absl::StartsWith(key, "locus_experiment_") &&
                          !absl::StartsWith(key, "locus_experiment_running");
    EXPECT_FALSE(running_series) << key;
  }
  // The next one runs, and ends on its own.
  m.clear_experiment();
  exporter.Observe(m, v1::AgentStatus());
  *m.mutable_experiment() = RunningExperiment(2);
  m.mutable_experiment()->set_id("exp-2");
  exporter.Observe(m, v1::AgentStatus());
  EXPECT_EQ(Collect(exporter)["locus_experiment_running{}"], 1);
  m.mutable_experiment()->set_state(v1::EXPERIMENT_STATE_DONE);
  exporter.Observe(m, v1::AgentStatus());
  s = Collect(exporter);
  EXPECT_EQ(s["locus_experiments_ended_total{state=done,}"], 1);
  EXPECT_EQ(s["locus_experiments_ended_total{state=guardrail,}"], 1);
  EXPECT_EQ(s.count("locus_experiment_intervals{}"), 0u);
}

// A switchback's workers are in no arm of their own: the block under way
// says which, and each arm's work is its last whole block's.
TEST(PrometheusExporterTest, ASwitchbacksArmsAreItsBlocks) {
  PrometheusExporter exporter({"1", "k"});
  v1::Metrics m;
  v1::ExperimentReport& r = *m.mutable_experiment() = RunningExperiment(30);
  r.set_design("switchback");
  r.set_treated(6);
  r.set_control(0);
  auto block = [&r](bool on, bool complete, double work) {
    v1::ExperimentBlock& b = *r.add_blocks();
    b.set_on(on);
    b.set_complete(complete);
    b.set_bytes_per_cpu_second(work);
  };
  block(true, true, 1000);
  block(false, true, 800);
  block(false, true, 900);
  block(true, false, 1e9);  // under way: its figures are not yet whole
  exporter.Observe(m, v1::AgentStatus());
  Series s = Collect(exporter);
  EXPECT_EQ(s["locus_experiment_units{arm=treated,}"], 6);
  EXPECT_EQ(s["locus_experiment_units{arm=control,}"], 0);
  EXPECT_EQ(s["locus_experiment_work_per_cpu_second{arm=treated,}"], 1000);
  EXPECT_EQ(s["locus_experiment_work_per_cpu_second{arm=control,}"], 900);
  r.mutable_blocks()->RemoveLast();
  exporter.Observe(m, v1::AgentStatus());
  s = Collect(exporter);
  EXPECT_EQ(s["locus_experiment_units{arm=treated,}"], 0);
  EXPECT_EQ(s["locus_experiment_units{arm=control,}"], 6);
}

// After its end an experiment's result stays, by id, for a fleet's
// recording rules to pool, until the next experiment starts.
TEST(PrometheusExporterTest, TheLastResultStaysByIdUntilTheNextStarts) {
  PrometheusExporter exporter({"1", "k"});
  v1::Metrics m;
  *m.mutable_experiment() = RunningExperiment(30);
  m.mutable_experiment()->set_id("exp-1");
  m.mutable_experiment()->mutable_work()->set_log_ratio(0.0296);
  m.mutable_experiment()->mutable_work()->set_se(0.01);
  m.mutable_experiment()->mutable_work()->set_df(12);
  exporter.Observe(m, v1::AgentStatus());
  const std::string key =
      "locus_experiment_result{id=exp-1,metric=bytes_per_cpu_second,stat=";
  EXPECT_EQ(Collect(exporter).count(key + "se,}"), 0u);  // not while it runs
  m.mutable_experiment()->set_state(v1::EXPERIMENT_STATE_DONE);
  exporter.Observe(m, v1::AgentStatus());
  m.clear_experiment();
  exporter.Observe(m, v1::AgentStatus());
  Series s = Collect(exporter);
  EXPECT_EQ(s[key + "log_ratio,}"], 0.0296);
  EXPECT_EQ(s[key + "se,}"], 0.01);
  EXPECT_EQ(s[key + "df,}"], 12);
  EXPECT_EQ(s[key + "low,}"], 1.01);
  // The connections had no estimate: no result for them.
  for (const auto& [k, v] : s)
    EXPECT_FALSE(absl::StrContains(k, "connections_per_cpu_second,stat")) << k;
  *m.mutable_experiment() = RunningExperiment(1);
  m.mutable_experiment()->set_id("exp-2");
  exporter.Observe(m, v1::AgentStatus());
  EXPECT_EQ(Collect(exporter).count(key + "se,}"), 0u);
  // Neither an A/A run nor one stopped early is a result for the fleet.
  for (bool aa : {true, false}) {
    *m.mutable_experiment() = RunningExperiment(30);
    m.mutable_experiment()->set_id(aa ? "exp-aa" : "exp-stopped");
    m.mutable_experiment()->set_aa(aa);
    m.mutable_experiment()->mutable_work()->set_se(0.01);
    m.mutable_experiment()->set_state(aa ? v1::EXPERIMENT_STATE_DONE
                                         : v1::EXPERIMENT_STATE_STOPPED);
    exporter.Observe(m, v1::AgentStatus());
    for (const auto& [k, v] : Collect(exporter))
      EXPECT_FALSE(absl::StrContains(k, "locus_experiment_result")) << k;
  }
  // A switchback's result is the whole host on against off: labelled apart.
  *m.mutable_experiment() = RunningExperiment(30);
  m.mutable_experiment()->set_id("exp-sb");
  m.mutable_experiment()->set_design("switchback");
  m.mutable_experiment()->mutable_work()->set_se(0.02);
  m.mutable_experiment()->set_state(v1::EXPERIMENT_STATE_DONE);
  exporter.Observe(m, v1::AgentStatus());
  s = Collect(exporter);
  EXPECT_EQ(s["locus_experiment_result{id=exp-sb,metric=switchback_host_bytes_"
              "per_cpu_second,stat=se,}"],
            0.02);
  for (const auto& [k, v] : s)
    EXPECT_FALSE(absl::StrContains(k, "metric=bytes_per_cpu_second")) << k;
}

}  // namespace
}  // namespace locus
