#include "policy/experiment_switchback.h"

#include <cmath>
#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "policy/experiment_t.h"

namespace locus::experiment {

std::vector<bool> SwitchbackSchedule(uint32_t pairs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<bool> on;
  on.reserve(2 * size_t{pairs});
  for (uint32_t i = 0; i < pairs; ++i) {
    const bool first = (rng() & 1) != 0;
    on.push_back(first);
    on.push_back(!first);
  }
  return on;
}

RatioEstimate PairedRatio(const std::vector<BlockFigure>& blocks,
                          double level) {
  // Per pair its on and off figure, when both blocks ran to their end.
  std::map<uint32_t, std::pair<double, double>> pairs;
  for (const BlockFigure& block : blocks) {
    auto& [on, off] = pairs[block.pair];
    const double value = block.complete && block.value > 0 ? block.value : -1;
    (block.on ? on : off) = value;
  }
  std::vector<double> d;
  for (const auto& [pair, figures] : pairs) {
    if (figures.first > 0 && figures.second > 0)
      d.push_back(std::log(figures.first / figures.second));
  }
  RatioEstimate estimate;
  estimate.treated = estimate.control = static_cast<int>(d.size());
  estimate.strata = 1;
  if (d.size() < 2) {
    estimate.why_not = absl::StrCat(
        "needs two complete pairs of blocks (one on, one off each) with "
        "work in both; has ",
        d.size());
    return estimate;
  }
  const double n = static_cast<double>(d.size());
  double mean = 0;
  for (double x : d) mean += x / n;
  double ss = 0;
  for (double x : d) ss += (x - mean) * (x - mean);
  estimate.log_ratio = mean;
  estimate.se = std::sqrt(ss / (n - 1) / n);
  estimate.df = n - 1;
  if (!(estimate.se > 0)) {
    // Every pair moved by exactly the same factor: no spread to put an
    // interval on (a constant figure, as a fake's).
    estimate.why_not = "the pairs' ratios do not vary: no interval";
    return estimate;
  }
  const TInterval interval =
      IntervalOf(estimate.log_ratio, estimate.se, estimate.df, level);
  estimate.ratio = interval.ratio;
  estimate.low = interval.low;
  estimate.high = interval.high;
  estimate.detectable = interval.detectable;
  estimate.valid = true;
  return estimate;
}

}  // namespace locus::experiment
