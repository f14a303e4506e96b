// The neighbours' part of the exporter: whether irqbalance and numad run,
// and what Locus handed them (Metrics.neighbours).
#include "agent/api/prometheus_exporter.h"

namespace locus {

void PrometheusExporter::RegisterNeighbours() {
  neighbour_running_ =
      NewGauge("locus_neighbour_running",
               "1 while the other tuner (irqbalance, numad) runs on the host");
  neighbour_problem_ = NewGauge(
      "locus_neighbour_problem",
      "1 while Locus cannot share the work with that tuner (status says why)");
  irqbalance_irqs_ =
      NewGauge("locus_irqbalance_banned_irqs",
               "IRQs on irqbalance's ban list: by Locus, by others, and "
               "asked for by Locus but not confirmed yet (pending)");
  numad_excluded_ = NewGauge("locus_numad_excluded_workers",
                             "Workers on numad's exclusion list through Locus");
}

void PrometheusExporter::ObserveNeighbours(const v1::Metrics& metrics) {
  for (const v1::Neighbour& n : metrics.neighbours()) {
    neighbour_running_->Add({{"neighbour", n.name()}}).Set(n.running());
    neighbour_problem_->Add({{"neighbour", n.name()}})
        .Set(!n.problem().empty());
    if (n.name() == "irqbalance") {
      irqbalance_irqs_->Add({{"by", "locus"}}).Set(n.irqs_banned_size());
      irqbalance_irqs_->Add({{"by", "others"}})
          .Set(n.irqs_banned_by_others_size());
      irqbalance_irqs_->Add({{"by", "pending"}}).Set(n.irqs_pending_size());
    } else if (n.name() == "numad") {
      numad_excluded_->Add({}).Set(n.pids_excluded_size());
    }
  }
}

}  // namespace locus
