// The memory tiers' part of the exporter: each node's tier (an info series
// to join other per-node series on, e.g. the targets' resident memory on a
// lower tier) and the pages the kernel moved between tiers
// (Metrics.memory_tiering).
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/api/prometheus_exporter.h"
#include "agent/api/prometheus_labels.h"

namespace locus {

void PrometheusExporter::RegisterTiers() {
  node_info_ = NewGauge(
      "locus_node_info",
      "1 per NUMA node: its memory tier (memory_tierN; -1: none listed), its "
      "online CPUs, and lower_tier=1 where its memory is slower than that "
      "of the nodes with CPUs (Locus leaves those pages to the kernel)");
  tier_pages_ = NewCounter(
      "locus_kernel_tier_pages_total",
      "Pages the kernel moved between memory tiers since boot (/proc/vmstat "
      "pgpromote_success; pgdemote_kswapd + pgdemote_direct + "
      "pgdemote_khugepaged)");
}

void PrometheusExporter::ObserveTiers(const v1::Metrics& metrics) {
  std::map<std::string, prometheus::Gauge*> now;
  for (const v1::TierNode& node : metrics.memory_tiering().nodes()) {
    const std::string label = NodeLabel(node.node());
    const prometheus::Labels labels = {
        {"node", label},
        {"tier", absl::StrCat(node.has_tier() ? node.tier() : -1)},
        {"cpus", absl::StrCat(node.cpus())},
        {"lower_tier", node.lower_tier() ? "1" : "0"}};
    prometheus::Gauge* gauge = &node_info_->Add(labels);
    gauge->Set(1);
    // A node whose labels changed (CPUs offlined, a tier assigned late)
    // keeps one series, not the old one beside the new.
    auto old = node_info_series_.find(label);
    if (old != node_info_series_.end() && old->second != gauge) {
      node_info_->Remove(old->second);
    }
    node_info_series_.erase(label);
    now[label] = gauge;
  }
  for (const auto& [label, gauge] : node_info_series_) {
    node_info_->Remove(gauge);  // a node gone offline
  }
  node_info_series_ = std::move(now);
  // The kernel's totals since boot, exported as counters that follow them:
  // only where the kernel counts them at all.
  const v1::MemoryTiering& tiering = metrics.memory_tiering();
  for (auto [direction, total, last] :
       {std::tuple{"promote", tiering.promoted_total(), &last_promoted_},
        std::tuple{"demote", tiering.demoted_total(), &last_demoted_}}) {
    if (total < 0) continue;
    const uint64_t value = static_cast<uint64_t>(total);
    prometheus::Counter& counter = tier_pages_->Add({{"direction", direction}});
    if (value >= *last) counter.Increment(static_cast<double>(value - *last));
    *last = value;
  }
}

}  // namespace locus
