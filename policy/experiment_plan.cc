#include "policy/experiment_plan.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace locus::experiment {

Plan SizeExperiment(double min_effect, const Noise& noise, int workers,
                    int asked) {
  Plan plan;
  if (!(noise.detectable > 0) || noise.intervals < 1 || noise.workers < 1) {
    plan.why_not =
        "no noise measured on this host yet: run an A/A experiment (--aa) "
        "first, whose report sizes the next";
    return plan;
  }
  // Its floor with today's workers: what the last run's length gave.
  const double floor =
      noise.detectable *
      std::sqrt(static_cast<double>(noise.workers) / std::max(workers, 1));
  if (floor > min_effect) {
    plan.detectable = floor;
    plan.why_not = absl::StrFormat(
        "this host could detect ±%.1f %% with %d workers (its last run: "
        "±%.1f %% with %d workers over %d intervals), not ±%.1f %%: more "
        "time does not lower a floor set by differences between workers; "
        "a pre-period (--pre) or more workers do",
        floor * 100, workers, noise.detectable * 100, noise.workers,
        noise.intervals, min_effect * 100);
    return plan;
  }
  // Fewer intervals than the last run: the detectable effect grows as
  // sqrt(last / n); the least n that still reaches min_effect.
  const double ratio = floor / min_effect;
  const int least =
      std::max(2, static_cast<int>(std::ceil(noise.intervals * ratio * ratio)));
  plan.intervals = asked > 0 ? asked : least;
  plan.detectable =
      floor * std::sqrt(std::max(
                  1.0, static_cast<double>(noise.intervals) / plan.intervals));
  if (plan.intervals < least) {
    plan.why_not = absl::StrFormat(
        "%d intervals could detect ±%.1f %%, not ±%.1f %%: it needs %d "
        "intervals at least",
        plan.intervals, plan.detectable * 100, min_effect * 100, least);
    return plan;
  }
  plan.ok = true;
  return plan;
}

}  // namespace locus::experiment
