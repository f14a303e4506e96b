#include "agent/sensors/feature_probe.h"

#include <errno.h>

#include <map>

#include "agent/sensors/source_plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;

// Answers from a table and counts how often each feature was asked.
class FakeProber : public KernelProber {
 public:
  std::map<Feature, ProbeResult> answers;
  std::map<Feature, int> calls;

  ProbeResult Probe(Feature f) override {
    ++calls[f];
    auto it = answers.find(f);
    if (it != answers.end()) return it->second;
    ProbeResult ok;
    ok.available = true;
    return ok;
  }
};

ProbeResult Rejected(int err, const char* detail) {
  ProbeResult r;
  r.error = err;
  r.detail = detail;
  return r;
}

TEST(FeatureProbeTest, NamesRoundTrip) {
  for (int i = 0; i < kNumFeatures; ++i) {
    Feature f = static_cast<Feature>(i);
    EXPECT_EQ(FeatureFromName(FeatureName(f)), f);
  }
  EXPECT_EQ(FeatureFromName("kprobe"), std::nullopt);
}

TEST(FeatureProbeTest, ParseFeatureList) {
  auto s = ParseFeatureList(" fentry, tp_btf ,,iter_task");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT(
      *s, ElementsAre(Feature::kFentry, Feature::kTpBtf, Feature::kIterTask));
  EXPECT_TRUE(ParseFeatureList("")->empty());
  auto bad = ParseFeatureList("fentry,kprobes");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("kprobes"));
}

TEST(FeatureProbeTest, ProbesOnceAndCaches) {
  FakeProber prober;
  prober.answers[Feature::kFentry] = Rejected(EPERM, "load");
  FeatureSet features(&prober, {});
  EXPECT_FALSE(features.Has(Feature::kFentry));
  EXPECT_FALSE(features.Has(Feature::kFentry));
  EXPECT_TRUE(features.Has(Feature::kTpBtf));
  EXPECT_TRUE(features.Has(Feature::kTpBtf));
  EXPECT_EQ(prober.calls[Feature::kFentry], 1);
  EXPECT_EQ(prober.calls[Feature::kTpBtf], 1);
  EXPECT_EQ(prober.calls[Feature::kIterTask], 0);  // never asked
  EXPECT_EQ(features.Explain(Feature::kFentry),
            "EPERM (Operation not permitted) at load");
}

TEST(FeatureProbeTest, ForcedOffIsNeverProbed) {
  FakeProber prober;
  FeatureSet features(&prober, {Feature::kTpBtf});
  EXPECT_FALSE(features.Has(Feature::kTpBtf));
  EXPECT_TRUE(features.Get(Feature::kTpBtf).forced_off);
  EXPECT_EQ(prober.calls[Feature::kTpBtf], 0);
  EXPECT_EQ(features.Explain(Feature::kTpBtf), "disabled by --disable_feature");
}

TEST(SourcePlanTest, EverythingAvailablePicksTheBest) {
  FakeProber prober;
  FeatureSet features(&prober, {});
  SourcePlan plan = ChooseSources(features);
  EXPECT_EQ(plan.sched, TraceSource::kTpBtf);
  EXPECT_EQ(plan.numa, NumaSource::kFentry);
  EXPECT_EQ(plan.softirq, TraceSource::kTpBtf);
  for (const SensorChoice& c : plan.choices) EXPECT_TRUE(c.rejected.empty());
}

TEST(SourcePlanTest, ThisKernelFentryEperm) {
  FakeProber prober;
  prober.answers[Feature::kFentry] = Rejected(EPERM, "load");
  FeatureSet features(&prober, {});
  SourcePlan plan = ChooseSources(features);
  EXPECT_EQ(plan.numa, NumaSource::kIterTask);
  ASSERT_EQ(plan.choices.size(), 3u);
  EXPECT_EQ(plan.choices[1].source, "iter_task");
  EXPECT_THAT(plan.choices[1].rejected,
              ElementsAre("fentry: needs fentry, EPERM (Operation not "
                          "permitted) at load"));
}

TEST(SourcePlanTest, EachForcedOffFeatureMovesToItsFallback) {
  struct Case {
    std::set<Feature> off;
    TraceSource trace;
    NumaSource numa;
  };
  const Case cases[] = {
      {{Feature::kTpBtf}, TraceSource::kRawTp, NumaSource::kFentry},
      {{Feature::kTaskStorage}, TraceSource::kRawTp, NumaSource::kFentry},
      {{Feature::kIterTask}, TraceSource::kRawTp, NumaSource::kFentry},
      {{Feature::kFentry}, TraceSource::kTpBtf, NumaSource::kIterTask},
      {{Feature::kFentry, Feature::kIterTask},
       TraceSource::kRawTp,
       NumaSource::kProcfs},
      {{Feature::kTpBtf, Feature::kRawTp},
       TraceSource::kNone,
       NumaSource::kFentry},
  };
  for (const Case& c : cases) {
    FakeProber prober;
    FeatureSet features(&prober, c.off);
    SourcePlan plan = ChooseSources(features);
    std::string label;
    for (Feature f : c.off) label += std::string(FeatureName(f)) + " ";
    EXPECT_EQ(plan.sched, c.trace) << label;
    EXPECT_EQ(plan.softirq, c.trace) << label;
    EXPECT_EQ(plan.numa, c.numa) << label;
    for (Feature f : c.off) EXPECT_EQ(prober.calls[f], 0) << label;
  }
}

TEST(SourcePlanTest, RejectionNamesTheForcedFeature) {
  FakeProber prober;
  FeatureSet features(&prober, {Feature::kTaskStorage});
  SourcePlan plan = ChooseSources(features);
  EXPECT_EQ(plan.choices[0].source, "raw_tp");
  EXPECT_THAT(plan.choices[0].rejected,
              ElementsAre("tp_btf: needs task_storage, disabled by "
                          "--disable_feature"));
}

}  // namespace
}  // namespace locus
