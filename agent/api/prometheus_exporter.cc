#include "agent/api/prometheus_exporter.h"

#include <sys/utsname.h>

#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "agent/api/prometheus_labels.h"
#include "prometheus/text_serializer.h"

namespace locus {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

constexpr const char* kLocalities[] = {"local", "remote", "unknown"};
constexpr const char* kActionKinds[] = {"pin_thread", "migrate_pages",
                                        "set_irq_affinity"};

// Tick work takes milliseconds; the top buckets catch overruns of a 1 s tick.
const prometheus::Histogram::BucketBoundaries& TickBuckets() {
  static const auto* buckets = new prometheus::Histogram::BucketBoundaries{
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};
  return *buckets;
}

const char* ActionKind(const v1::Action& action) {
  switch (action.op_case()) {
    case v1::Action::kPinThread:
      return kActionKinds[0];
    case v1::Action::kMigratePages:
      return kActionKinds[1];
    case v1::Action::kSetIrqAffinity:
      return kActionKinds[2];
    case v1::Action::OP_NOT_SET:
      break;
  }
  return "none";
}

// ACTION_OUTCOME_TASK_GONE -> task_gone.
std::string OutcomeLabel(v1::ActionOutcome outcome) {
  return absl::AsciiStrToLower(
      absl::StripPrefix(v1::ActionOutcome_Name(outcome), "ACTION_OUTCOME_"));
}

// "thread affinity" -> thread_affinity: ExternalChange.what is one of a few
// fixed phrases.
std::string ChangeKind(const std::string& what) {
  std::string kind = absl::AsciiStrToLower(what);
  for (char& c : kind) {
    if (!absl::ascii_isalnum(c)) c = '_';
  }
  return kind.empty() ? "unknown" : kind;
}

// Adds how much a cumulative value grew since `last` (a restart of the
// source counts from zero again).
void AddGrowth(prometheus::Counter& counter, uint64_t now, uint64_t& last) {
  if (now >= last) counter.Increment(static_cast<double>(now - last));
  last = now;
}

}  // namespace

std::string KernelRelease() {
  struct utsname name;
  if (uname(&name) != 0) return "unknown";
  return name.release;
}

PrometheusExporter::PrometheusExporter(const BuildInfo& build)
    : registry_(std::make_shared<prometheus::Registry>()) {
  RegisterCounters();
  RegisterGauges();
  RegisterExperiment();
  RegisterNeighbours();
  RegisterTiers();
  tick_duration_ = &BuildHistogram()
                        .Name("locus_tick_duration_seconds")
                        .Help("Time each control tick's work took")
                        .Register(*registry_)
                        .Add({}, TickBuckets());
  build_info_->Add({{"version", build.version}, {"kernel", build.kernel}})
      .Set(1);
  AddFixedSeries();
}

PrometheusExporter::Counters* PrometheusExporter::NewCounter(
    const std::string& name, const std::string& help) {
  return &BuildCounter().Name(name).Help(help).Register(*registry_);
}

PrometheusExporter::Gauges* PrometheusExporter::NewGauge(
    const std::string& name, const std::string& help) {
  return &BuildGauge().Name(name).Help(help).Register(*registry_);
}

void PrometheusExporter::RegisterCounters() {
  actions_ =
      NewCounter("locus_actions_total", "Actions decided, by kind and outcome");
  reverts_ = NewCounter("locus_reverts_total",
                        "Actions undone because their objective got worse");
  external_changes_ =
      NewCounter("locus_external_changes_total",
                 "Changes another tool made to what the agent set");
  pages_migrated_bytes_ = NewCounter(
      "locus_pages_migrated_bytes_total",
      "Bytes of target memory moved between nodes (from_node unknown: "
      "from any other node)");
  numa_faults_ = NewCounter(
      "locus_numa_faults_total",
      "NUMA hinting faults of target threads, by memory node and locality");
  tick_overruns_ = NewCounter("locus_tick_overruns_total",
                              "Ticks whose work took longer than the period");
  tick_cpu_ = NewCounter(
      "locus_tick_cpu_seconds_total",
      "CPU time the control loop's thread spent on its ticks (the rest of "
      "their duration it waited: for a CPU, a lock, the kernel)");
  sensor_events_dropped_ =
      NewCounter("locus_sensor_events_dropped_total",
                 "Sensor events lost to full BPF maps or ring buffers");
  policy_reloads_ = NewCounter("locus_policy_reload_total",
                               "Policy reloads, by result (ok, rejected)");
  connections_ = NewCounter(
      "locus_connections_total",
      "New connections of steered reuseport groups by the node that received "
      "them and where they went (local, spilled, fell_back, migrated)");
  irq_interrupts_ = NewCounter(
      "locus_irq_interrupts_total",
      "Interrupts of managed NIC IRQs, by whether a CPU of the device's "
      "node handled them");
}

void PrometheusExporter::RegisterGauges() {
  sensor_up_ =
      NewGauge("locus_sensor_up", "1 when the sensor reads from this source");
  policy_version_ =
      NewGauge("locus_policy_version", "Version of the policy in force");
  policy_reload_error_ = NewGauge(
      "locus_policy_reload_error",
      "1 while the last reload was rejected (the previous policy stays)");
  acting_ = NewGauge("locus_acting",
                     "1 when the agent changes the host: enforce mode and a "
                     "writable journal");
  dry_run_ =
      NewGauge("locus_dry_run", "1 in dry run (decides, changes nothing)");
  journal_entries_ =
      NewGauge("locus_journal_entries",
               "Threads, IRQs and steered listening groups the undo journal "
               "holds");
  held_down_ =
      NewGauge("locus_held_down", "Threads and IRQs left alone after a revert");
  node_local_fault_ratio_ = NewGauge(
      "locus_node_local_fault_ratio",
      "Local share of the last tick's NUMA faults on the node's memory; NaN "
      "in a tick without faults");
  node_cpu_busy_ = NewGauge("locus_node_cpu_busy_ratio",
                            "Mean busy fraction of the node's CPUs");
  node_runqueue_wait_ = NewGauge(
      "locus_node_runqueue_wait_seconds",
      "Run-queue wait of the target threads that last ran on the node over "
      "the last tick, seconds per second (schedstat)");
  worker_home_time_ = NewGauge(
      "locus_worker_home_time_ratio",
      "Share of the CPU time of the workers homed on the node, over the last "
      "tick, spent on its CPUs; below 1 while soft homes are widened");
  worker_resident_ = NewGauge(
      "locus_worker_resident_bytes",
      "Resident memory on `node` of the worker processes homed on `home` "
      "(none: without a home); the node's tier is locus_node_info's");
  node_memory_free_ =
      NewGauge("locus_node_memory_free_bytes", "Free memory on the node");
  target_resident_ = NewGauge("locus_target_resident_bytes",
                              "Resident memory of the target processes on the "
                              "node");
  target_processes_ =
      NewGauge("locus_target_processes", "Processes the policy selects");
  target_threads_ = NewGauge("locus_target_threads",
                             "Target threads by the node they last ran on");
  connection_groups_ =
      NewGauge("locus_connection_groups",
               "Reuseport groups of the targets, by whether they are steered");
  build_info_ =
      NewGauge("locus_build_info", "Always 1; the agent's version and kernel");
}

// Fixed label sets exist from the start, so rate() and increase() see the
// first event rather than a series appearing at 1.
void PrometheusExporter::AddFixedSeries() {
  for (const char* kind : kActionKinds) {
    for (int o = v1::ActionOutcome_MIN + 1; o <= v1::ActionOutcome_MAX; ++o) {
      actions_->Add(
          {{"kind", kind},
           {"outcome", OutcomeLabel(static_cast<v1::ActionOutcome>(o))}});
    }
  }
  reverts_->Add({});
  for (const char* kind : {"thread_affinity", "irq_affinity"}) {
    external_changes_->Add({{"kind", kind}});
  }
  tick_overruns_->Add({});
  tick_cpu_->Add({});
  for (const char* result : {"ok", "rejected"}) {
    policy_reloads_->Add({{"result", result}});
  }
}

void PrometheusExporter::Observe(const v1::Metrics& metrics,
                                 const v1::AgentStatus& status) {
  ObserveTick(metrics);
  ObserveActions(metrics);
  ObserveNodes(metrics);
  ObserveHomeTime(metrics);
  ObserveWorkerMemory(status);
  ObserveTargets(metrics, status);
  ObserveIrqs(metrics);
  ObserveSensors(metrics);
  ObservePolicy(metrics.policy());
  ObserveAgent(metrics, status);
  ObserveConnections(metrics);
  ObserveExperiment(metrics);
  ObserveNeighbours(metrics);
  ObserveTiers(metrics);
}

void PrometheusExporter::ObserveTick(const v1::Metrics& metrics) {
  tick_duration_->Observe(static_cast<double>(metrics.tick_duration_ns()) /
                          1e9);
  AddGrowth(tick_overruns_->Add({}), metrics.overruns_total(), last_overruns_);
  tick_cpu_->Add({}).Increment(static_cast<double>(metrics.tick_cpu_ns()) /
                               1e9);
  // Per sensor ("numa" of "numa.lru_evicted"), each counter's growth.
  for (const auto& [counter, total] : metrics.drops().sensor_events_dropped()) {
    const std::string sensor(counter.substr(0, counter.find('.')));
    AddGrowth(sensor_events_dropped_->Add({{"sensor", sensor}}), total,
              last_dropped_[counter]);
  }
}

void PrometheusExporter::ObserveActions(const v1::Metrics& metrics) {
  for (const v1::Action& action : metrics.actions()) {
    actions_
        ->Add({{"kind", ActionKind(action)},
               {"outcome", OutcomeLabel(action.outcome())}})
        .Increment();
    if (action.has_migrate_pages() &&
        action.outcome() == v1::ACTION_OUTCOME_APPLIED) {
      const v1::MigratePages& move = action.migrate_pages();
      pages_migrated_bytes_
          ->Add({{"from_node", NodeLabel(move.from_node())},
                 {"to_node", NodeLabel(move.to_node())}})
          .Increment(static_cast<double>(move.moved_bytes()));
    }
  }
  reverts_->Add({}).Increment(metrics.reverts_size());
  for (const v1::ExternalChange& change : metrics.external_changes()) {
    external_changes_->Add({{"kind", ChangeKind(change.what())}}).Increment();
  }
}

void PrometheusExporter::ObserveIrqs(const v1::Metrics& metrics) {
  std::vector<int32_t> node_of_cpu;
  for (const v1::NodeMetrics& node : metrics.nodes()) {
    for (int32_t cpu : node.cpus()) {
      if (cpu < 0) continue;
      if (static_cast<size_t>(cpu) >= node_of_cpu.size()) {
        node_of_cpu.resize(cpu + 1, -1);
      }
      node_of_cpu[cpu] = node.node();
    }
  }
  std::set<int32_t> seen;
  for (const v1::IrqMetrics& irq : metrics.irqs()) {
    seen.insert(irq.irq());
    uint64_t counts[3] = {0, 0, 0};
    for (int cpu = 0; cpu < irq.count_per_cpu_size(); ++cpu) {
      int32_t node =
          cpu < static_cast<int>(node_of_cpu.size()) ? node_of_cpu[cpu] : -1;
      int locality = irq.device_node() < 0 || node < 0 ? 2
                     : node == irq.device_node()       ? 0
                                                       : 1;
      counts[locality] += irq.count_per_cpu(cpu);
    }
    auto& series = irq_series_[irq.irq()];
    for (int l = 0; l < 3; ++l) {
      if (counts[l] == 0 && series[l] == nullptr) continue;
      if (series[l] == nullptr) {
        series[l] = &irq_interrupts_->Add(
            {{"irq", absl::StrCat(irq.irq())}, {"locality", kLocalities[l]}});
      }
      series[l]->Increment(static_cast<double>(counts[l]));
    }
  }
  for (auto it = irq_series_.begin(); it != irq_series_.end();) {
    if (seen.count(it->first) != 0) {
      ++it;
      continue;
    }
    for (prometheus::Counter* counter : it->second) {
      if (counter != nullptr) irq_interrupts_->Remove(counter);
    }
    it = irq_series_.erase(it);
  }
}

void PrometheusExporter::ObserveSensors(const v1::Metrics& metrics) {
  std::set<std::pair<std::string, std::string>> seen;
  for (const v1::SensorSource& sensor : metrics.sensors()) {
    std::pair<std::string, std::string> key{sensor.sensor(), sensor.source()};
    seen.insert(key);
    prometheus::Gauge*& gauge = sensor_series_[key];
    if (gauge == nullptr) {
      gauge = &sensor_up_->Add(
          {{"sensor", sensor.sensor()}, {"source", sensor.source()}});
    }
    gauge->Set(sensor.ok() ? 1 : 0);
  }
  for (auto it = sensor_series_.begin(); it != sensor_series_.end();) {
    if (seen.count(it->first) != 0) {
      ++it;
      continue;
    }
    sensor_up_->Remove(it->second);
    it = sensor_series_.erase(it);
  }
}

void PrometheusExporter::ObservePolicy(const v1::PolicyState& policy) {
  AddGrowth(policy_reloads_->Add({{"result", "ok"}}), policy.reloads_ok(),
            last_reloads_ok_);
  AddGrowth(policy_reloads_->Add({{"result", "rejected"}}),
            policy.reloads_rejected(), last_reloads_rejected_);
  policy_version_->Add({}).Set(static_cast<double>(policy.version()));
  policy_reload_error_->Add({}).Set(policy.last_error().empty() ? 0 : 1);
}

void PrometheusExporter::ObserveAgent(const v1::Metrics& metrics,
                                      const v1::AgentStatus& status) {
  bool enforce = metrics.mode() == v1::AGENT_MODE_ENFORCE;
  acting_->Add({}).Set(enforce && status.journal_error().empty() ? 1 : 0);
  dry_run_->Add({}).Set(metrics.mode() == v1::AGENT_MODE_DRY_RUN ? 1 : 0);
  journal_entries_->Add({}).Set(status.journal_entries());
  held_down_->Add({}).Set(status.held_down());
}

std::string PrometheusExporter::Text() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace locus
