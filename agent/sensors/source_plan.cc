#include "agent/sensors/source_plan.h"

#include "absl/strings/str_cat.h"

namespace locus {
namespace {

// Records why `source` is out when one of `needs` is missing; true if all
// are there.
bool Needs(FeatureSet& features, const char* source,
           std::initializer_list<Feature> needs, SensorChoice& choice) {
  bool ok = true;
  for (Feature f : needs) {
    if (features.Has(f)) continue;
    ok = false;
    choice.rejected.push_back(absl::StrCat(source, ": needs ", FeatureName(f),
                                           ", ", features.Explain(f)));
  }
  return ok;
}

TraceSource ChooseTrace(FeatureSet& features, SensorChoice& choice) {
  TraceSource s = TraceSource::kNone;
  if (Needs(features, "tp_btf",
            {Feature::kTpBtf, Feature::kTaskStorage, Feature::kIterTask},
            choice)) {
    s = TraceSource::kTpBtf;
  } else if (Needs(features, "raw_tp", {Feature::kRawTp}, choice)) {
    s = TraceSource::kRawTp;
  }
  choice.source = SourceName(s);
  return s;
}

}  // namespace

const char* SourceName(TraceSource s) {
  static constexpr const char* kNames[] = {"none", "tp_btf", "raw_tp"};
  return kNames[static_cast<int>(s)];
}

const char* SourceName(NumaSource s) {
  static constexpr const char* kNames[] = {"fentry", "iter_task", "procfs"};
  return kNames[static_cast<int>(s)];
}

SourcePlan ChooseSources(FeatureSet& features) {
  SourcePlan plan;
  SensorChoice sched;
  sched.sensor = "sched";
  plan.sched = ChooseTrace(features, sched);

  SensorChoice numa;
  numa.sensor = "numa";
  if (Needs(features, "fentry", {Feature::kFentry}, numa)) {
    plan.numa = NumaSource::kFentry;
  } else if (Needs(features, "iter_task", {Feature::kIterTask}, numa)) {
    plan.numa = NumaSource::kIterTask;
  } else {
    plan.numa = NumaSource::kProcfs;
  }
  numa.source = SourceName(plan.numa);

  SensorChoice softirq;
  softirq.sensor = "softirq";
  plan.softirq = ChooseTrace(features, softirq);

  plan.choices = {sched, numa, softirq};
  return plan;
}

}  // namespace locus
