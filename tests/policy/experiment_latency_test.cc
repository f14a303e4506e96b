// Service-time quantiles from the log-linear histogram, and the per-arm
// ratio with its worker-clustered bootstrap interval.
#include "policy/experiment_latency.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace locus::experiment {
namespace {

// The bucket of `us` by the layout's definition: 16 per power of two.
int BucketOf(double us) {
  for (int i = 0; i < kLatencyBuckets; ++i) {
    if (us < BucketHighUs(i)) return i;
  }
  return kLatencyBuckets - 1;
}

// A worker whose requests take `us` times `scale`.
WorkerLatency Worker(Arm arm, const std::vector<double>& us, double scale = 1) {
  WorkerLatency w;
  w.arm = arm;
  w.counts.assign(kLatencyBuckets, 0);
  for (double u : us) ++w.counts[BucketOf(u * scale)];
  return w;
}

// `n` service times drawn log-normally around `median_us`.
std::vector<double> Draws(std::mt19937_64& rng, int n, double median_us,
                          double sigma = 0.5) {
  std::lognormal_distribution<double> d(std::log(median_us), sigma);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(d(rng));
  return out;
}

TEST(LatencyBucketsTest, TileTheLineWithoutGapsAndStayNarrow) {
  EXPECT_EQ(kLatencyBuckets, 432);
  EXPECT_EQ(BucketLowUs(0), 0);
  EXPECT_EQ(BucketLowUs(15), 15);
  EXPECT_EQ(BucketLowUs(16), 16);
  EXPECT_EQ(BucketLowUs(32), 32);
  EXPECT_EQ(BucketHighUs(32), 34);  // 2 us wide from 32 us
  for (int i = 0; i + 1 < kLatencyBuckets; ++i) {
    ASSERT_EQ(BucketHighUs(i), BucketLowUs(i + 1)) << i;
    if (i >= 16) {
      ASSERT_LE((BucketHighUs(i) - BucketLowUs(i)) / BucketLowUs(i), 1 / 16.0)
          << i;
    }
  }
  // The last bucket starts at 2^30 us (about 18 minutes).
  EXPECT_EQ(BucketLowUs(kLatencyBuckets - 1), std::ldexp(31, 25));
}

TEST(LatencyQuantileTest, InterpolatesWithinTheBucket) {
  EXPECT_FALSE(Quantile({}, 0.5).has_value());
  EXPECT_FALSE(Quantile(std::vector<uint64_t>(10, 0), 0.5).has_value());
  std::vector<uint64_t> counts(kLatencyBuckets, 0);
  counts[BucketOf(1000)] = 100;  // bucket [992, 1024)
  EXPECT_NEAR(*Quantile(counts, 0.5), 1008, 0.01);
  EXPECT_NEAR(*Quantile(counts, 0.99), 992 + 0.99 * 32, 0.01);
}

TEST(LatencyQuantileTest, IsWithinThreePercentOfTheExactQuantile) {
  std::mt19937_64 rng(7);
  std::vector<double> us = Draws(rng, 20000, 3000, 1.0);
  WorkerLatency w = Worker(Arm::kControl, us);
  std::sort(us.begin(), us.end());
  for (double q : {0.5, 0.9, 0.99}) {
    double exact = us[static_cast<size_t>(q * us.size())];
    EXPECT_NEAR(*Quantile(w.counts, q) / exact, 1, 0.03) << q;
  }
}

TEST(LatencyEstimateTest, NeedsTwoWorkersWithRequestsPerArm) {
  std::mt19937_64 rng(1);
  std::vector<WorkerLatency> workers = {
      Worker(Arm::kTreated, Draws(rng, 100, 500)),
      Worker(Arm::kTreated, Draws(rng, 100, 500)),
      Worker(Arm::kControl, Draws(rng, 100, 500)),
      Worker(Arm::kControl, {}),  // served nothing
  };
  LatencyEstimate est = EstimateLatency(workers, 3);
  EXPECT_EQ(est.treated, 2);
  EXPECT_EQ(est.control, 1);
  EXPECT_EQ(est.treated_requests, 200u);
  EXPECT_FALSE(est.p99.valid);
  EXPECT_NE(est.p99.why_not.find("control 1"), std::string::npos)
      << est.p99.why_not;
  EXPECT_GT(est.p50.control_us, 0);  // the quantiles are still given
}

TEST(LatencyEstimateTest, RecoversAShiftAndIsDeterministicForASeed) {
  std::mt19937_64 rng(11);
  std::vector<WorkerLatency> workers;
  for (int i = 0; i < 4; ++i) {
    workers.push_back(Worker(Arm::kTreated, Draws(rng, 3000, 800), 1.3));
    workers.push_back(Worker(Arm::kControl, Draws(rng, 3000, 800)));
  }
  LatencyEstimate est = EstimateLatency(workers, 5);
  ASSERT_TRUE(est.p50.valid) << est.p50.why_not;
  ASSERT_TRUE(est.p99.valid) << est.p99.why_not;
  EXPECT_NEAR(est.p50.ratio, 1.3, 0.06);
  EXPECT_NEAR(est.p99.ratio, 1.3, 0.15);
  EXPECT_LT(est.p50.low, 1.3);
  EXPECT_GT(est.p50.high, 1.3);
  EXPECT_GT(est.p50.low, 1);  // the shift is clear
  EXPECT_EQ(est.p50.df, 6);
  EXPECT_GT(est.p50.se_log, 0);
  LatencyEstimate again = EstimateLatency(workers, 5);
  EXPECT_EQ(again.p99.low, est.p99.low);
  EXPECT_EQ(again.p99.high, est.p99.high);
}

// Workers differ from each other (each its own median), as real workers
// do: an interval that resampled requests instead of workers would
// exclude 1 in most A/A runs, and the resamples' percentiles, blind to how
// few the workers are, in 29 of these 200. Student's t on the workers' df
// excludes it in 15 (7.5 %).
TEST(LatencyEstimateTest, AnAAExcludesOneInUnderOneRunInTen) {
  std::mt19937_64 rng(2026);
  std::lognormal_distribution<double> worker_median(std::log(1000), 0.3);
  int runs = 200, excluded = 0;
  for (int run = 0; run < runs; ++run) {
    std::vector<WorkerLatency> workers;
    for (int i = 0; i < 8; ++i) {
      workers.push_back(Worker(i % 2 ? Arm::kTreated : Arm::kControl,
                               Draws(rng, 400, worker_median(rng))));
    }
    LatencyEstimate est = EstimateLatency(workers, run, 400);
    ASSERT_TRUE(est.p50.valid);
    if (est.p50.low > 1 || est.p50.high < 1) ++excluded;
  }
  EXPECT_LE(excluded, runs / 10);
}

}  // namespace
}  // namespace locus::experiment
