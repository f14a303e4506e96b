// Reading the experiment while it runs without spending more than its
// error rate. Pure.
//
// The guardrail (stop when Locus is harmful) is a one-sided group-
// sequential test with Lan-DeMets O'Brien-Fleming-type alpha spending:
// alpha(tau) = 2 - 2 Phi(z_{1-alpha/2} / sqrt(tau)), almost nothing spent
// early, when few intervals are in, most of it at the end. The boundary at
// each look is computed exactly from the joint distribution of the looks'
// z statistics (a Brownian motion in information time, Cov(Z_j, Z_k) =
// sqrt(t_j / t_k)) by the recursive numerical integration of Armitage,
// McPherson and Rowe (Jennison and Turnbull, ch. 19): the chance of a
// first crossing at look k is exactly what the spending allows at k, so
// the whole budget is used. A union bound (p below the alpha spent since
// the last look) would spend a twentieth of it over 180 looks.
//
// The live estimate is read with a normal-mixture confidence sequence (the
// mixture sequential probability ratio test of Robbins, as in Johari et
// al., "Always valid inference"): with the estimate's variance V and a
// normal mixing distribution of variance tau^2 on the log ratio, the set
// theta_hat +- sqrt(V (V + tau^2) / tau^2 (log((V + tau^2) / V) + 2 log(1 /
// alpha))) holds the truth at every look at once with probability 1 -
// alpha, however often it is read. It is wider than the fixed-horizon
// interval, which stays the answer at the planned end.
#ifndef LOCUS_POLICY_EXPERIMENT_SEQUENTIAL_H_
#define LOCUS_POLICY_EXPERIMENT_SEQUENTIAL_H_

#include <limits>
#include <vector>

namespace locus::experiment {

// alpha(tau) of Lan-DeMets O'Brien-Fleming-type spending, tau in [0, 1].
double SpentAlpha(double alpha, double tau);

// The one-sided boundaries, in z, for looks at increasing information
// fractions `fractions` (in (0, 1]; the last is usually 1): stop at look k
// when Z_k <= -bound[k]. Infinity where the spending allows (almost)
// nothing.
std::vector<double> HarmBoundaries(const std::vector<double>& fractions,
                                   double alpha);

inline constexpr double kNoBound = std::numeric_limits<double>::infinity();

// At most this many looks: the recursion costs the looks times a grid as
// fine as the step between them, and a day of 10 s intervals would take
// seconds on the loop's thread; 200 looks spend the budget as well.
inline constexpr int kMaxLooks = 200;

// One look of the guardrail: after `interval` counted intervals (from 1),
// harm is declared below -z (kNoBound: the look spends too little to set
// one).
struct HarmLook {
  int interval = 0;
  double z = kNoBound;
};

// The guardrail's looks for an experiment of `planned` intervals that looks
// after every interval from `first_look` on (every
// ceil((planned - first_look + 1) / kMaxLooks)-th when there are more, the
// last always), at information fraction (intervals counted) / planned: at
// most kMaxLooks, in order, whatever the plan's length.
std::vector<HarmLook> PlannedHarmLooks(int planned, int first_look,
                                       double alpha);

// The bound of the look after `counted` intervals; kNoBound when none looks
// then.
double HarmBoundAt(const std::vector<HarmLook>& looks, int counted);

// The chance of crossing `bounds` (as above) at some look when the drift
// of Z at information fraction 1 is `drift` (Z_k has mean drift *
// sqrt(t_k)): alpha for drift 0 when the bounds came from HarmBoundaries.
double CrossingProbability(const std::vector<double>& fractions,
                           const std::vector<double>& bounds, double drift);

// The mixing distribution's standard deviation on the log ratio: 0.05, the
// size of effect in question (a few %). A confidence sequence is
// tightest where V is near tau^2 / 2 .. 2 tau^2 and within a few % of that
// width across a hundredfold of V, so one fixed choice serves the hosts'
// standard errors (0.005 to 0.05) at their planned ends.
inline constexpr double kMixingSd = 0.05;

// Half-width, in standard errors, of the normal-mixture confidence
// sequence at variance `variance` (z scale: multiply by the SE).
double MixtureHalfWidth(double variance, double alpha,
                        double mixing_sd = kMixingSd);

struct GuardrailLook {
  bool stop = false;
  double p = 1;      // one-sided p that the treated arm is worse
  double bound = 0;  // the nominal p the boundary sets at this look
};

// A look of the guardrail at the estimate (log ratio, its SE and df): the
// t statistic's one-sided p against Phi(-bound_z), so that a small df
// (a few workers) does not make a normal boundary too easy to cross.
GuardrailLook LookForHarm(double log_ratio, double se, double df,
                          double bound_z);

// The normal-mixture confidence sequence of the ratio at this look, its
// half-width taken from z to Student's t on the estimate's df as the
// guardrail's p is.
struct Sequence {
  double low = 1, high = 1;
  bool excludes_one() const { return low > 1 || high < 1; }
};
Sequence ConfidenceSequence(double log_ratio, double se, double df,
                            double alpha = 0.05, double mixing_sd = kMixingSd);

}  // namespace locus::experiment

#endif  // LOCUS_POLICY_EXPERIMENT_SEQUENTIAL_H_
