// Pooling one experiment's results across hosts. Pure.
//
// Each host's record gives its log ratio and standard error. The fixed-
// effect estimate weights each host by 1 / SE^2 (inverse variance): the
// answer if Locus has one effect everywhere. Hosts differ (hardware,
// traffic), so the random-effects estimate (DerSimonian and Laird) adds the
// between-host variance tau^2, estimated by the method of moments from
// Cochran's Q, to each host's variance before weighting: its interval is
// the one to act on when the effect varies by host. I^2 = (Q - df) / Q is
// the share of the spread between hosts that is real rather than noise.
#ifndef LOCUS_POLICY_EXPERIMENT_POOL_H_
#define LOCUS_POLICY_EXPERIMENT_POOL_H_

#include <string>
#include <vector>

namespace locus::experiment {

struct HostResult {
  std::string host;
  double log_ratio = 0;
  double se = 0;
};

struct PooledEstimate {
  bool valid = false;
  std::string why_not;
  int hosts = 0;
  // Fixed effect (inverse variance) and random effects (DerSimonian-Laird),
  // on the log ratio, with their standard errors and 95 % intervals of the
  // ratio (normal: the hosts' own df are large enough after pooling).
  double fixed = 0, fixed_se = 0, fixed_low = 1, fixed_high = 1;
  double random = 0, random_se = 0, random_low = 1, random_high = 1;
  double q = 0;       // Cochran's Q, on hosts - 1 df
  double i2 = 0;      // in [0, 1]
  double tau2 = 0;    // between-host variance of the log ratio
  double spread = 0;  // standard deviation of the hosts' log ratios
};

// Hosts without a positive, finite SE are refused (why_not names them).
PooledEstimate Pool(const std::vector<HostResult>& hosts);

}  // namespace locus::experiment

#endif  // LOCUS_POLICY_EXPERIMENT_POOL_H_
