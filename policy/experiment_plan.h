// Pre-registration: sizing an experiment's duration for the smallest
// effect it must detect, from this host's own noise (its last experiment,
// A/A or not: its detectable effect, workers and intervals). Pure.
//
// The model is the cautious one. With more workers the detectable effect
// falls as 1 / sqrt(workers). With fewer intervals than the last run it
// rises as sqrt(last / planned) (the noise that averages out over time);
// with more it is taken not to fall at all, since persistent differences
// between workers set a floor that time does not lower (a pre-period does).
#ifndef LOCUS_POLICY_EXPERIMENT_PLAN_H_
#define LOCUS_POLICY_EXPERIMENT_PLAN_H_

#include <cstdint>
#include <string>

namespace locus::experiment {

// The longest experiment, pre-period or interval Locus runs: 30 days. Its
// nanoseconds (2.6e15) fit an int64 with room to spare, and its intervals of
// a second or more fit 32 bits; a request for longer is refused before any
// arithmetic on it.
inline constexpr int64_t kMaxExperimentSeconds = 30 * 24 * 3600;

struct Noise {
  double detectable = 0;  // the last run's, a fraction (0.05 = 5 %)
  int intervals = 0;      // it counted
  int workers = 0;        // it used
};

struct Plan {
  bool ok = false;
  int intervals = 0;      // to count after the burn-in
  double detectable = 0;  // expected at that length
  std::string why_not;    // when not ok: what it could detect, what it needs
};

// `min_effect` (a fraction), the workers now, and the intervals asked for
// (0: as few as suffice).
Plan SizeExperiment(double min_effect, const Noise& noise, int workers,
                    int asked);

}  // namespace locus::experiment

#endif  // LOCUS_POLICY_EXPERIMENT_PLAN_H_
