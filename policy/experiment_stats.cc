#include "policy/experiment_stats.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "policy/experiment_t.h"

namespace locus::experiment {
namespace {

struct Cell {
  std::vector<double> y;
  double Mean() const {
    double sum = 0;
    for (double v : y) sum += v;
    return sum / static_cast<double>(y.size());
  }
  double SquaredDeviations() const {
    const double mean = Mean();
    double sum = 0;
    for (double v : y) sum += (v - mean) * (v - mean);
    return sum;
  }
};

struct Stratum {
  Cell treated, control;
};

// The estimate over `strata`, each holding both arms.
Estimate Compare(const std::map<int, Stratum>& strata, double level) {
  Estimate e;
  int cells = 0;
  double squares = 0;
  for (const auto& [id, s] : strata) {
    e.treated += static_cast<int>(s.treated.y.size());
    e.control += static_cast<int>(s.control.y.size());
    squares += s.treated.SquaredDeviations() + s.control.SquaredDeviations();
    cells += 2;
  }
  const int used = e.treated + e.control;
  e.df = used - cells;
  if (e.treated < 2 || e.control < 2 || e.df < 1) {
    e.why_not = absl::StrCat(
        "needs at least 2 workers with work and CPU time in each arm, and "
        "more workers than arms per node compared (has ",
        e.treated, " treated, ", e.control, " control)");
    return e;
  }
  const double pooled = squares / e.df;
  double diff = 0, var = 0;
  for (const auto& [id, s] : strata) {
    const double w =
        static_cast<double>(s.treated.y.size() + s.control.y.size()) / used;
    diff += w * (s.treated.Mean() - s.control.Mean());
    var +=
        w * w * pooled * (1.0 / s.treated.y.size() + 1.0 / s.control.y.size());
  }
  e.se_log = std::sqrt(var);
  const TInterval i = IntervalOf(diff, e.se_log, e.df, level);
  e.ratio = i.ratio;
  e.low = i.low;
  e.high = i.high;
  e.detectable = i.detectable;
  e.valid = true;
  return e;
}

}  // namespace

Estimate EstimateRatio(const std::vector<UnitTotals>& units, double level) {
  std::map<int, Stratum> strata;
  int left_out = 0;
  for (const UnitTotals& u : units) {
    // The negated tests also leave out NaN.
    if (!(u.cpu_seconds > 0) || !(u.work > 0)) {
      ++left_out;
      continue;
    }
    Stratum& s = strata[u.stratum];
    (u.arm == Arm::kTreated ? s.treated : s.control)
        .y.push_back(std::log(u.work / u.cpu_seconds));
  }
  // Only strata holding both arms compare anything.
  std::map<int, Stratum> both;
  Stratum all;
  int dropped = 0;
  for (auto& [id, s] : strata) {
    if (s.treated.y.empty() || s.control.y.empty()) {
      dropped += static_cast<int>(s.treated.y.size() + s.control.y.size());
      continue;
    }
    for (double y : s.treated.y) all.treated.y.push_back(y);
    for (double y : s.control.y) all.control.y.push_back(y);
    both[id] = std::move(s);
  }
  Estimate e = Compare(both, level);
  // One worker per arm and node (4 workers on 2 nodes) leaves no degrees of
  // freedom within the strata: the comparison of the same workers all at
  // once is still unbiased (the split was random) and has them.
  if (!e.valid && both.size() > 1) {
    Estimate pooled = Compare({{0, std::move(all)}}, level);
    if (pooled.valid) e = std::move(pooled);
  }
  e.left_out = left_out;
  e.dropped = dropped;
  if (!e.valid && (left_out > 0 || dropped > 0)) {
    absl::StrAppend(&e.why_not, "; left out: ", left_out,
                    " without work or CPU time, ", dropped,
                    " on nodes without the other arm");
  }
  return e;
}

}  // namespace locus::experiment
