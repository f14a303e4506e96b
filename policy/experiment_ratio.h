// The experiment's primary estimate: the ratio of totals. Pure.
//
// What an operator means by "Locus gives 3 % more work per CPU-second" is
// the host's work over the host's CPU time, so within each stratum (one
// server instance on one node) each arm's estimate is its total work over
// its total CPU time, and the strata are combined on the log scale weighted
// by their share of all CPU time (both arms): a busy stratum counts as much
// as the CPU it burns. A worker that burnt CPU but did no work lowers its
// arm's ratio (it is in the denominator), as it should: the worst-hurt
// workers must not vanish from the answer.
//
// The interval is clustered on the worker, the unit of randomisation: the
// delta method linearises log(total work / total CPU) into one value per
// worker, u_i = (work_i - R cpu_i) / total work, so whatever the
// correlation between a worker's intervals, it is one observation. With
// few workers of unequal size the plain sum of u_i^2 is too small (the
// busiest worker pulls the ratio towards itself), so each term is divided
// by its expected shrinkage under equal per-worker noise (1 - 2 h_i +
// sum h^2, h_i its CPU share: the bias-reduced linearisation of Bell and
// McCaffrey), and the degrees of freedom are Satterthwaite's for that
// weighted sum, combined across cells as Welch does. A stratum where an arm
// has fewer than two workers cannot give a variance: then the whole host is
// one stratum (still unbiased: the split was random).
//
// CUPED: with a pre-period (counters read, nothing applied) each worker's
// pre-period value, linearised the same way, is the covariate; one
// coefficient theta over all cells minimises the variance, the estimate is
// d - theta d_pre (unbiased: the arms were drawn at random, so E d_pre = 0)
// and one degree of freedom pays for theta.
#ifndef LOCUS_POLICY_EXPERIMENT_RATIO_H_
#define LOCUS_POLICY_EXPERIMENT_RATIO_H_

#include <string>
#include <vector>

#include "policy/experiment_stats.h"

namespace locus::experiment {

struct RatioEstimate {
  bool valid = false;
  std::string why_not;  // when not valid
  // log(treated / control) of total work per total CPU-second.
  double log_ratio = 0;
  double se = 0;  // its standard error, clustered on the worker
  double df = 0;
  double ratio = 1, low = 1, high = 1;  // exp of the above, `level` interval
  // Smallest |effect| (0.05 = 5 %) detected with 80 % power at two-sided
  // alpha 0.05, at this standard error and df.
  double detectable = 0;
  int treated = 0, control = 0;  // workers used
  int left_out = 0;              // workers with neither work nor CPU time
  int dropped = 0;               // workers in a stratum lacking an arm
  int strata = 0;                // strata compared (1 when collapsed)
  bool collapsed = false;        // strata merged: too few workers per cell
  // CUPED, when asked for and every worker used has a pre-period.
  bool adjusted = false;
  // 1 - adjusted variance / unadjusted variance.
  double variance_reduction = 0;
  bool significant() const { return valid && (low > 1 || high < 1); }
};

// `units[i].stratum` names its (instance, node). `level`: of the two-sided
// interval. `cuped`: adjust with the units' pre-period (not done, adjusted
// false, when some worker used has no pre-period work and CPU time).
RatioEstimate EstimateTotals(const std::vector<UnitTotals>& units,
                             double level = 0.95, bool cuped = false);

}  // namespace locus::experiment

#endif  // LOCUS_POLICY_EXPERIMENT_RATIO_H_
