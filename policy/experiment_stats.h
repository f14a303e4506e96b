// The experiment's secondary statistic: the equal-weight (geometric mean of
// workers) treated/control ratio of work per CPU-second with its confidence
// interval and the effect it could detect. The primary estimate is the
// ratio of totals (experiment_ratio.h): this one answers "how did the
// typical worker fare", where a nearly idle worker counts as much as the
// busiest. Pure.
//
// The method, and why: it must hold with few workers and with intervals
// that are correlated. The unit of analysis is the worker, the unit of
// randomisation: each worker's work and CPU time are summed over all its
// intervals and y = log(work / CPU seconds) taken once per worker. Intervals
// of one worker are correlated (the same connections, the same cache); as
// one measurement per worker that correlation cannot make the interval too
// narrow, whatever its shape. Arms are compared within each node (stratum),
// d_s = mean_T(y) - mean_C(y), and the strata weighted by their share of
// workers: a node that runs slower for both arms moves neither. A node
// lacking an arm is left out of the contrast, and so is a worker without
// work or CPU time (both counted). The variance is the pooled
// within-(stratum, arm) variance, with Student's t on its degrees of freedom
// (workers - cells): exact for normal y, where a normal or bootstrap
// interval would be too narrow with the 4 to 64 workers a host has. With
// one worker per arm and node there is no variance within the strata: then
// the same workers are compared all at once (still unbiased: the split was
// random). Both arms run at the same time, so the time of day and the
// traffic's swings cancel in the difference.
#ifndef LOCUS_POLICY_EXPERIMENT_STATS_H_
#define LOCUS_POLICY_EXPERIMENT_STATS_H_

#include <string>
#include <vector>

#include "policy/experiment_assign.h"

namespace locus::experiment {

// One worker's totals over the intervals it took part in.
struct UnitTotals {
  int stratum = 0;  // node it was assigned on
  Arm arm = Arm::kControl;
  double work = 0;  // bytes sent (or connections accepted)
  double cpu_seconds = 0;
  int intervals = 0;
  // Its pre-period (counters read, nothing applied): the covariate of the
  // totals estimate's CUPED adjustment (experiment_ratio.h); 0 when none.
  double pre_work = 0;
  double pre_cpu_seconds = 0;
};

struct Estimate {
  bool valid = false;
  std::string why_not;  // when not valid
  // Treated / control of work per CPU-second, and its interval.
  double ratio = 1, low = 1, high = 1;
  double se_log = 0;  // standard error of log(ratio)
  double df = 0;
  // Smallest |effect| (a fraction: 0.05 = 5 %) detected with 80 % power at
  // two-sided alpha 0.05, at this standard error and df.
  double detectable = 0;
  int treated = 0, control = 0;  // workers used
  int left_out = 0;              // workers without work or CPU time
  int dropped = 0;               // workers on a node that lacks the other arm
  bool significant() const { return valid && (low > 1 || high < 1); }
};

// `level`: of the two-sided interval (0.95).
Estimate EstimateRatio(const std::vector<UnitTotals>& units,
                       double level = 0.95);

}  // namespace locus::experiment

#endif  // LOCUS_POLICY_EXPERIMENT_STATS_H_
