// The experiment's report: what `locusctl experiment status` shows, the
// record keeps and the metrics stream carries. Built from the running
// state (units.h) and the estimates (policy/experiment_stats.h).
#ifndef LOCUS_AGENT_EXPERIMENT_REPORT_H_
#define LOCUS_AGENT_EXPERIMENT_REPORT_H_

#include <string>

#include "agent/experiment/units.h"
#include "locus/v1/agent.pb.h"
#include "policy/experiment_ratio.h"
#include "policy/experiment_stats.h"

namespace locus {

// The designs (StartExperimentRequest.design).
inline constexpr char kAbDesign[] = "ab";
inline constexpr char kSwitchback[] = "switchback";

// "+3.1 %" of a ratio, and "[+1.2, +5.0] %" of an estimate's interval.
std::string PercentChange(double ratio);
std::string PercentBounds(const v1::ExperimentEstimate& e);

// How the estimate is made, in words, for the report.
extern const char kExperimentMethod[];

// A unit's share of accepted connections is fair within this distance of
// its share of the units' intervals.
inline constexpr double kFairShare = 0.10;

// `estimate` of `metric` into the report's form. `live`: read before the
// planned end, where low, high and significant are the confidence
// sequence's (valid at any look), not the fixed-horizon interval's, which
// holds only when read once, at the end planned.
v1::ExperimentEstimate EstimateProto(const experiment::RatioEstimate& estimate,
                                     const std::string& metric, bool live);
// The secondary, equal-weight estimate, read the same way.
v1::ExperimentEstimate EstimateProto(const experiment::Estimate& estimate,
                                     const std::string& metric, bool live);

// The running experiment's report. `whole`: with its units and every
// interval of the series; otherwise (the metrics stream) the last interval
// only.
v1::ExperimentReport BuildReport(const RunningExperiment& run, bool whole);

// The plain verdict: "Locus: +3.1 % work per CPU-second [1.2, 5.0],
// significant", "no significant difference (...)", the A/A resolution, or
// why there is no estimate; before the planned end "running, not
// conclusive" or "inconclusive (stopped at N of M intervals)" unless the
// confidence sequence excluded 0.
std::string Verdict(const v1::ExperimentReport& report);

}  // namespace locus

#endif  // LOCUS_AGENT_EXPERIMENT_REPORT_H_
