#include "policy/experiment_latency.h"

#include <cmath>
#include <random>
#include <string>
#include <utility>

#include "policy/experiment_t.h"

namespace locus::experiment {
namespace {

constexpr int kSub = 1 << kLatencySubBits;

// Resampled quantiles of one arm: its workers drawn with replacement.
struct ArmPool {
  std::vector<const std::vector<uint64_t>*> workers;

  std::vector<uint64_t> Draw(std::mt19937_64& rng) const {
    std::vector<uint64_t> pooled;
    std::uniform_int_distribution<size_t> pick(0, workers.size() - 1);
    for (size_t i = 0; i < workers.size(); ++i) {
      AddCounts(pooled, *workers[pick(rng)]);
    }
    return pooled;
  }

  std::vector<uint64_t> All() const {
    std::vector<uint64_t> pooled;
    for (const std::vector<uint64_t>* w : workers) AddCounts(pooled, *w);
    return pooled;
  }
};

uint64_t Total(const std::vector<uint64_t>& counts) {
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  return total;
}

}  // namespace

double BucketLowUs(int i) {
  if (i < kSub) return i;
  int msb = i / kSub + kLatencySubBits - 1;
  int sub = i % kSub;
  return std::ldexp(kSub + sub, msb - kLatencySubBits);
}

double BucketHighUs(int i) {
  if (i < kSub) return i + 1;
  if (i >= kLatencyBuckets - 1) return 2 * BucketLowUs(i);
  return BucketLowUs(i) +
         std::ldexp(1, i / kSub + kLatencySubBits - 1 - kLatencySubBits);
}

std::optional<double> Quantile(const std::vector<uint64_t>& counts, double q) {
  uint64_t total = Total(counts);
  if (total == 0) return std::nullopt;
  // The rank of the quantile among the requests, as a continuous position.
  double rank = q * static_cast<double>(total);
  uint64_t below = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] == 0) continue;
    if (static_cast<double>(below + counts[i]) >= rank) {
      double within =
          (rank - static_cast<double>(below)) / static_cast<double>(counts[i]);
      int b = static_cast<int>(i);
      return BucketLowUs(b) + within * (BucketHighUs(b) - BucketLowUs(b));
    }
    below += counts[i];
  }
  int last = static_cast<int>(counts.size()) - 1;
  return BucketHighUs(last);
}

void AddCounts(std::vector<uint64_t>& counts,
               const std::vector<uint64_t>& add) {
  if (counts.size() < add.size()) counts.resize(add.size());
  for (size_t i = 0; i < add.size(); ++i) counts[i] += add[i];
}

namespace {

// The workers with requests into their arm's pool, counted in `out`.
void SplitArms(const std::vector<WorkerLatency>& workers, LatencyEstimate& out,
               ArmPool& treated, ArmPool& control) {
  for (const WorkerLatency& w : workers) {
    uint64_t requests = Total(w.counts);
    if (requests == 0) continue;
    ArmPool& pool = w.arm == Arm::kTreated ? treated : control;
    pool.workers.push_back(&w.counts);
    (w.arm == Arm::kTreated ? out.treated_requests : out.control_requests) +=
        requests;
  }
  out.treated = static_cast<int>(treated.workers.size());
  out.control = static_cast<int>(control.workers.size());
}

}  // namespace

LatencyEstimate EstimateLatency(const std::vector<WorkerLatency>& workers,
                                uint64_t seed, int resamples) {
  LatencyEstimate out;
  ArmPool treated, control;
  SplitArms(workers, out, treated, control);
  std::vector<uint64_t> all_treated = treated.All();
  std::vector<uint64_t> all_control = control.All();

  std::mt19937_64 rng(seed);
  // Each resample's log(treated / control), per quantile.
  std::vector<double> d50, d99;
  bool enough = out.treated >= 2 && out.control >= 2;
  for (int r = 0; enough && r < resamples; ++r) {
    std::vector<uint64_t> t = treated.Draw(rng);
    std::vector<uint64_t> c = control.Draw(rng);
    for (auto [q, draws] : {std::pair{0.5, &d50}, std::pair{0.99, &d99}}) {
      std::optional<double> tq = Quantile(t, q), cq = Quantile(c, q);
      if (tq && cq && *tq > 0 && *cq > 0) draws->push_back(std::log(*tq / *cq));
    }
  }
  auto fill = [&](double q, const std::vector<double>& draws,
                  QuantileRatio& est) {
    est.q = q;
    std::optional<double> tq = Quantile(all_treated, q);
    std::optional<double> cq = Quantile(all_control, q);
    if (tq) est.treated_us = *tq;
    if (cq) est.control_us = *cq;
    if (!enough) {
      est.why_not = "needs two workers with requests in each arm (treated " +
                    std::to_string(out.treated) + ", control " +
                    std::to_string(out.control) + ")";
      return;
    }
    if (!tq || !cq || *tq <= 0 || *cq <= 0 ||
        draws.size() < static_cast<size_t>(resamples) / 2) {
      est.why_not = "service times too short to resolve (under 1 us)";
      return;
    }
    est.valid = true;
    double mean = 0;
    for (double l : draws) mean += l;
    mean /= static_cast<double>(draws.size());
    double ss = 0;
    for (double l : draws) ss += (l - mean) * (l - mean);
    est.se_log = std::sqrt(ss / static_cast<double>(draws.size() - 1));
    est.df = out.treated + out.control - 2;
    const TInterval interval =
        IntervalOf(std::log(*tq / *cq), est.se_log, est.df, 0.95);
    est.ratio = interval.ratio;
    est.low = interval.low;
    est.high = interval.high;
  };
  fill(0.5, d50, out.p50);
  fill(0.99, d99, out.p99);
  return out;
}

}  // namespace locus::experiment
