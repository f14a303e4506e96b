// The agent's metrics as Prometheus sees them: one registry of cumulative
// counters and gauges, fed each tick's locus.v1.Metrics (whose counters are
// per-tick deltas: they are summed here) and the AgentStatus of that tick.
// Served by MetricsExport (metrics_export.h) over HTTP and as a textfile.
//
// Cardinality is bounded by what the host has, never by what it runs: label
// values are NUMA nodes, IRQ numbers, sensors and fixed kinds (action kinds,
// outcomes, localities). No series carries a pid, tid or comm, so 10 or
// 10,000 target threads give the same series. Series of an IRQ or sensor
// source that went away are removed.
//
// A new family (say locus_connections_total{node,path} from the steering
// part of Metrics) is one member built in the constructor and one Observe*
// step called from Observe.
#ifndef LOCUS_AGENT_API_PROMETHEUS_EXPORTER_H_
#define LOCUS_AGENT_API_PROMETHEUS_EXPORTER_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "locus/v1/agent.pb.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace locus {

struct BuildInfo {
  std::string version;  // "0.1.0 (build 1a2b3c4d5e6f)"
  std::string kernel;   // uname -r
};

// The kernel release this process runs on (uname -r); "unknown" if uname
// fails.
std::string KernelRelease();

class PrometheusExporter {
 public:
  explicit PrometheusExporter(const BuildInfo& build);
  PrometheusExporter(const PrometheusExporter&) = delete;
  PrometheusExporter& operator=(const PrometheusExporter&) = delete;

  // One tick. Called on the control loop's thread; scrapes may read the
  // registry at the same time (prometheus-cpp's metrics are atomic).
  void Observe(const v1::Metrics& metrics, const v1::AgentStatus& status);

  // What /metrics serves (metrics_http.h).
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }
  // The registry in the text exposition format (what a scrape returns).
  std::string Text() const;

 private:
  using Counters = prometheus::Family<prometheus::Counter>;
  using Gauges = prometheus::Family<prometheus::Gauge>;

  void ObserveTick(const v1::Metrics& metrics);
  void ObserveActions(const v1::Metrics& metrics);
  void ObserveNodes(const v1::Metrics& metrics);
  void ObserveTargets(const v1::Metrics& metrics,
                      const v1::AgentStatus& status);
  void ObserveIrqs(const v1::Metrics& metrics);
  void ObserveHomeTime(const v1::Metrics& metrics);
  void ObserveWorkerMemory(const v1::AgentStatus& status);
  void ObserveSensors(const v1::Metrics& metrics);
  void ObservePolicy(const v1::PolicyState& policy);
  void ObserveAgent(const v1::Metrics& metrics, const v1::AgentStatus& status);
  void ObserveConnections(const v1::Metrics& metrics);
  // prometheus_experiment.cc: the running A/B experiment (Metrics.experiment).
  void RegisterExperiment();
  void ObserveExperiment(const v1::Metrics& metrics);
  void ClearExperiment();
  void CountEnded(const v1::ExperimentReport& r);
  void ExportResult(const v1::ExperimentReport& r);
  void ClearResult();
  // prometheus_neighbours.cc: irqbalance and numad (Metrics.neighbours).
  void RegisterNeighbours();
  void ObserveNeighbours(const v1::Metrics& metrics);
  void RegisterTiers();
  void ObserveTiers(const v1::Metrics& metrics);

  Counters* NewCounter(const std::string& name, const std::string& help);
  Gauges* NewGauge(const std::string& name, const std::string& help);
  void RegisterCounters();
  void RegisterGauges();
  void AddFixedSeries();

  std::shared_ptr<prometheus::Registry> registry_;
  // Families, owned by the registry.
  Counters* actions_ = nullptr;
  Counters* reverts_ = nullptr;
  Counters* external_changes_ = nullptr;
  Counters* pages_migrated_bytes_ = nullptr;
  Counters* numa_faults_ = nullptr;
  Counters* tick_overruns_ = nullptr;
  Counters* tick_cpu_ = nullptr;
  Counters* sensor_events_dropped_ = nullptr;
  Counters* policy_reloads_ = nullptr;
  Counters* irq_interrupts_ = nullptr;
  Counters* connections_ = nullptr;
  Gauges* connection_groups_ = nullptr;
  Gauges* sensor_up_ = nullptr;
  Gauges* policy_version_ = nullptr;
  Gauges* policy_reload_error_ = nullptr;
  Gauges* acting_ = nullptr;
  Gauges* dry_run_ = nullptr;
  Gauges* journal_entries_ = nullptr;
  Gauges* held_down_ = nullptr;
  Gauges* node_local_fault_ratio_ = nullptr;
  Gauges* node_cpu_busy_ = nullptr;
  Gauges* node_runqueue_wait_ = nullptr;
  Gauges* worker_home_time_ = nullptr;
  Gauges* worker_resident_ = nullptr;
  Gauges* node_memory_free_ = nullptr;
  Gauges* target_resident_ = nullptr;
  Gauges* target_processes_ = nullptr;
  Gauges* target_threads_ = nullptr;
  Gauges* build_info_ = nullptr;
  prometheus::Histogram* tick_duration_ = nullptr;
  Gauges* experiment_running_ = nullptr;
  Gauges* experiment_intervals_ = nullptr;
  Gauges* experiment_units_ = nullptr;
  Gauges* experiment_work_ = nullptr;
  Gauges* experiment_estimate_ = nullptr;
  Gauges* experiment_guardrail_p_ = nullptr;
  Gauges* experiment_result_ = nullptr;
  Counters* experiments_ended_ = nullptr;
  Gauges* neighbour_running_ = nullptr;
  Gauges* neighbour_problem_ = nullptr;
  Gauges* irqbalance_irqs_ = nullptr;
  Gauges* numad_excluded_ = nullptr;
  Gauges* node_info_ = nullptr;
  Counters* tier_pages_ = nullptr;

  // The cumulative values Metrics carries (*_total), to add their growth.
  uint64_t last_overruns_ = 0;
  std::map<std::string, uint64_t> last_dropped_;  // by "sensor.counter"
  uint64_t last_reloads_ok_ = 0;
  uint64_t last_reloads_rejected_ = 0;
  uint64_t last_promoted_ = 0;  // the kernel's, since boot
  uint64_t last_demoted_ = 0;
  // locus_node_info's series by node label, the last labels each had.
  std::map<std::string, prometheus::Gauge*> node_info_series_;
  // Series that come and go with the host: sensor sources and IRQs. Removed
  // when no longer reported.
  std::map<std::pair<std::string, std::string>, prometheus::Gauge*>
      sensor_series_;
  // Per IRQ, its counters by locality (local, remote, unknown); null until
  // the IRQ first fires with that locality.
  std::map<int32_t, std::array<prometheus::Counter*, 3>> irq_series_;
  // The experiment's series, removed when none runs (a stale estimate on a
  // graph would read as a live one).
  std::vector<std::pair<Gauges*, prometheus::Gauge*>> experiment_series_;
  std::string last_ended_experiment_;  // its end counted once
  // The last ended experiment's result, kept until the next one starts.
  std::vector<prometheus::Gauge*> experiment_result_series_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_API_PROMETHEUS_EXPORTER_H_
