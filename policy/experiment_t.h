// What the experiment's estimators share of Student's t: the distributions
// at double precision, and an interval with its detectable effect.
#ifndef LOCUS_POLICY_EXPERIMENT_T_H_
#define LOCUS_POLICY_EXPERIMENT_T_H_

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>

namespace locus::experiment {

// Double precision: Boost's default promotes to long double for digits an
// interval or a p-value never needs, at several times the cost (every
// interval, and in the guardrail's simulations thousands of times).
using BoostDouble =
    boost::math::policies::policy<boost::math::policies::promote_double<false>>;
using StudentT = boost::math::students_t_distribution<double, BoostDouble>;
using Normal = boost::math::normal_distribution<double, BoostDouble>;

// A log ratio's two-sided `level` interval, as ratios, and the smallest
// |effect| (0.05 = 5 %) detected with 80 % power at two-sided alpha 0.05,
// whatever `level`.
struct TInterval {
  double ratio = 1, low = 1, high = 1, detectable = 0;
};
inline TInterval IntervalOf(double log_ratio, double se, double df,
                            double level) {
  const StudentT t(df);
  const double q = boost::math::quantile(t, 0.5 + level / 2);
  const double q975 = level == 0.95 ? q : boost::math::quantile(t, 0.975);
  const double q80 = boost::math::quantile(t, 0.80);
  return {.ratio = std::exp(log_ratio),
          .low = std::exp(log_ratio - q * se),
          .high = std::exp(log_ratio + q * se),
          .detectable = std::exp((q975 + q80) * se) - 1};
}

}  // namespace locus::experiment

#endif  // LOCUS_POLICY_EXPERIMENT_T_H_
