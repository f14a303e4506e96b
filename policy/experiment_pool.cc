#include "policy/experiment_pool.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace locus::experiment {
namespace {

constexpr double kZ975 = 1.959963984540054;

// Inverse-variance mean of `hosts` with each variance increased by `tau2`.
void Weighted(const std::vector<HostResult>& hosts, double tau2, double* mean,
              double* se) {
  double sw = 0, swy = 0;
  for (const HostResult& h : hosts) {
    const double w = 1 / (h.se * h.se + tau2);
    sw += w;
    swy += w * h.log_ratio;
  }
  *mean = swy / sw;
  *se = std::sqrt(1 / sw);
}

}  // namespace

PooledEstimate Pool(const std::vector<HostResult>& hosts) {
  PooledEstimate p;
  p.hosts = static_cast<int>(hosts.size());
  for (const HostResult& h : hosts) {
    if (!(h.se > 0) || !std::isfinite(h.se) || !std::isfinite(h.log_ratio)) {
      p.why_not = absl::StrCat("host ", h.host, " has no standard error");
      return p;
    }
  }
  if (hosts.empty()) {
    p.why_not = "no records";
    return p;
  }
  Weighted(hosts, 0, &p.fixed, &p.fixed_se);
  double sw = 0, sw2 = 0, mean = 0;
  for (const HostResult& h : hosts) {
    const double w = 1 / (h.se * h.se);
    sw += w;
    sw2 += w * w;
    p.q += w * (h.log_ratio - p.fixed) * (h.log_ratio - p.fixed);
    mean += h.log_ratio / p.hosts;
  }
  const double df = p.hosts - 1;
  for (const HostResult& h : hosts) {
    p.spread += (h.log_ratio - mean) * (h.log_ratio - mean);
  }
  p.spread = p.hosts > 1 ? std::sqrt(p.spread / df) : 0;
  p.i2 = p.q > df && p.q > 0 ? (p.q - df) / p.q : 0;
  p.tau2 = p.q > df ? (p.q - df) / (sw - sw2 / sw) : 0;
  Weighted(hosts, p.tau2, &p.random, &p.random_se);
  p.fixed_low = std::exp(p.fixed - kZ975 * p.fixed_se);
  p.fixed_high = std::exp(p.fixed + kZ975 * p.fixed_se);
  p.random_low = std::exp(p.random - kZ975 * p.random_se);
  p.random_high = std::exp(p.random + kZ975 * p.random_se);
  p.valid = true;
  return p;
}

}  // namespace locus::experiment
