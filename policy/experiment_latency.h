// What users feel, per arm of the experiment: the service time of requests
// (p50 and p99 of every request the arm's workers served) and the ratio
// treated / control with its interval. Pure.
//
// Service times arrive as counts per bucket of a log-linear histogram (the
// layout of locus_work_bucket in bpf/include/locus/work.h, which this file
// inverts): 16 buckets per power of two of microseconds, so a quantile read
// from it is within 1/32 (about 3 %) of the truth, interpolating linearly
// inside the bucket that holds it.
//
// An arm's quantile pools all its workers' requests: the p99 an operator's
// load balancer would see from that arm. Its interval is a bootstrap
// clustered on the worker, the unit of randomisation: requests of one
// worker share its connections, its CPU and its queue, so they are not
// independent, and resampling requests would give an interval far too
// narrow. Each resample draws, within each arm, as many workers as it has,
// with replacement, pools their histograms and takes the quantiles; the
// standard error of log(ratio) is the resampled ratios' standard deviation
// on the log scale, and the interval Student's t on workers - 2 degrees of
// freedom about the pooled ratio, as the guardrail reads it. Not the
// resamples' 2.5th and 97.5th percentiles: with the 4 to 64 workers of a
// host those ignore that the workers themselves are few (4 + 4 workers: 29
// of 200 A/A runs excluded 1 with them).
#ifndef LOCUS_POLICY_EXPERIMENT_LATENCY_H_
#define LOCUS_POLICY_EXPERIMENT_LATENCY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "policy/experiment_assign.h"

namespace locus::experiment {

// The histogram's layout (bpf/include/locus/work.h; the agent checks that
// both agree).
inline constexpr int kLatencySubBits = 4;
inline constexpr int kLatencyMaxMsb = 29;
inline constexpr int kLatencyBuckets = (kLatencyMaxMsb - kLatencySubBits + 2)
                                       << kLatencySubBits;

// The microseconds bucket `i` holds: [low, high). The last bucket holds
// everything from its low bound up; its high is its low doubled.
double BucketLowUs(int i);
double BucketHighUs(int i);

// The q-quantile (0 < q < 1) of a histogram's counts (kLatencyBuckets or
// fewer; missing buckets are empty), in microseconds, linear within the
// bucket that holds it; nullopt when the histogram is empty.
std::optional<double> Quantile(const std::vector<uint64_t>& counts, double q);

// counts += add, bucket by bucket (counts grows to fit).
void AddCounts(std::vector<uint64_t>& counts, const std::vector<uint64_t>& add);

// One worker's service times over the intervals it counted.
struct WorkerLatency {
  Arm arm = Arm::kControl;
  std::vector<uint64_t> counts;
};

// One quantile of both arms and their ratio.
struct QuantileRatio {
  double q = 0;
  bool valid = false;
  std::string why_not;
  double treated_us = 0, control_us = 0;
  double ratio = 1, low = 1, high = 1;  // treated / control, 95 % interval
  double se_log = 0;  // the bootstrap's standard deviation of log(ratio)
  double df = 0;      // workers with requests - 2
};

struct LatencyEstimate {
  QuantileRatio p50, p99;
  int treated = 0, control = 0;  // workers with requests
  uint64_t treated_requests = 0, control_requests = 0;
};

// Both arms' p50 and p99 with the ratios' intervals from `resamples`
// bootstrap resamples drawn from `seed` (deterministic). A ratio needs two
// workers with requests in each arm.
LatencyEstimate EstimateLatency(const std::vector<WorkerLatency>& workers,
                                uint64_t seed, int resamples = 1000);

}  // namespace locus::experiment

#endif  // LOCUS_POLICY_EXPERIMENT_LATENCY_H_
