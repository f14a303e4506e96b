#include "policy/experiment_sequential.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "policy/experiment_t.h"

namespace locus::experiment {
namespace {

// Beyond this many standard deviations a normal density is taken as 0.
constexpr double kWidth = 8;
// Grid points per standard deviation of the smallest increment.
constexpr double kPerSd = 8;
// Spending below this at a look sets no boundary there.
constexpr double kLeast = 1e-14;

double Phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
double Pdf(double x) {
  return std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi);
}

// The sub-density of S_k = Z_k sqrt(t_k) over the paths that have not
// crossed: on a uniform grid lo + j h, zero at and below the boundary
// `edge`, plus its value at the edge itself (the trapezoid's first node).
struct Density {
  double lo = 0, h = 0;
  std::vector<double> f;
  double edge = -kNoBound;  // -infinity: no boundary at this look
  double at_edge = 0;
  size_t First() const {  // first grid index above the edge
    if (!(edge > lo)) return 0;
    return std::min(f.size(), static_cast<size_t>((edge - lo) / h) + 1);
  }
};

// The density as point masses for the trapezoid rule: the grid nodes above
// the edge and the edge itself.
struct Masses {
  size_t first = 0;
  std::vector<double> m;  // per grid node (0 below `first`)
  double edge = -kNoBound, at_edge = 0;
};

Masses Weigh(const Density& d) {
  Masses out;
  out.first = d.First();
  out.m.assign(d.f.size(), 0.0);
  out.edge = d.edge;
  if (out.first >= d.f.size()) return out;
  for (size_t j = out.first; j < d.f.size(); ++j) out.m[j] = d.h * d.f[j];
  out.m[out.first] = 0.5 * d.h * d.f[out.first];
  out.m.back() *= 0.5;
  if (d.edge > d.lo) {
    const double gap = d.lo + out.first * d.h - d.edge;
    out.m[out.first] += 0.5 * gap * d.f[out.first];
    out.at_edge = 0.5 * gap * d.at_edge;
  }
  return out;
}

// The chance of a first crossing at a look: S moves by N(mean, sd^2) from
// `prev` and ends at or below b.
double Cross(const Density& prev, const Masses& w, double mean, double sd,
             double b) {
  double sum = 0;
  if (w.at_edge > 0) sum += w.at_edge * Phi((b - w.edge - mean) / sd);
  const double reach = (b - mean + kWidth * sd - prev.lo) / prev.h;
  const size_t end =
      std::min(prev.f.size(), static_cast<size_t>(std::max(0.0, reach)) + 1);
  for (size_t j = w.first; j < end; ++j) {
    if (w.m[j] > 0) sum += w.m[j] * Phi((b - prev.lo - j * prev.h - mean) / sd);
  }
  return sum;
}

// The density after the move, cut at b (-infinity: not cut).
Density Advance(const Density& prev, double mean, double sd, double b) {
  const Masses w = Weigh(prev);
  Density next;
  next.lo = prev.lo;
  next.h = prev.h;
  next.f.assign(prev.f.size(), 0.0);
  next.edge = b;
  // The normal kernel between grid nodes i - j = m, |m| <= span.
  const int span = static_cast<int>(std::ceil(kWidth * sd / prev.h)) + 1;
  std::vector<double> kernel(2 * span + 1);
  for (int m = -span; m <= span; ++m)
    kernel[m + span] = Pdf((m * prev.h - mean) / sd) / sd;
  const int n = static_cast<int>(next.f.size());
  for (int i = static_cast<int>(next.First()); i < n; ++i) {
    double sum = 0;
    const int from = std::max(static_cast<int>(w.first), i - span);
    const int to = std::min(n - 1, i + span);
    for (int j = from; j <= to; ++j) sum += w.m[j] * kernel[i - j + span];
    if (w.at_edge > 0)
      sum += w.at_edge * Pdf((next.lo + i * next.h - w.edge - mean) / sd) / sd;
    next.f[i] = sum;
  }
  if (b > next.lo) {
    double sum =
        w.at_edge > 0 ? w.at_edge * Pdf((b - w.edge - mean) / sd) / sd : 0;
    for (size_t j = w.first; j < prev.f.size(); ++j) {
      if (w.m[j] > 0)
        sum += w.m[j] * Pdf((b - prev.lo - j * prev.h - mean) / sd) / sd;
    }
    next.at_edge = sum;
  }
  return next;
}

// The first look's density: S_1 ~ N(drift t, t), cut at b.
Density FirstLook(double t, double drift, double b, double lo, double h,
                  size_t n) {
  Density d;
  d.lo = lo;
  d.h = h;
  d.f.assign(n, 0.0);
  d.edge = b;
  const double sd = std::sqrt(t);
  for (size_t j = d.First(); j < n; ++j)
    d.f[j] = Pdf((lo + j * h - drift * t) / sd) / sd;
  if (b > lo) d.at_edge = Pdf((b - drift * t) / sd) / sd;
  return d;
}

// The grid for `fractions`: wide enough for every look, fine enough for the
// smallest step between looks.
void Grid(const std::vector<double>& fractions, double drift, double* lo,
          double* h, size_t* n) {
  double step = fractions.front();
  for (size_t k = 1; k < fractions.size(); ++k)
    step = std::min(step, fractions[k] - fractions[k - 1]);
  *h = std::sqrt(std::max(step, 1e-9)) / kPerSd;
  const double top = std::sqrt(fractions.back());
  *lo = std::min(0.0, drift * fractions.back()) - kWidth * top;
  const double hi = std::max(0.0, drift * fractions.back()) + kWidth * top;
  *n = static_cast<size_t>((hi - *lo) / *h) + 2;
}

// The boundary b (on S) whose first-crossing chance from `prev` is `target`:
// stepped up from below by standard deviations of the move (each try costs
// only the nodes within reach), then halved.
double Solve(const Density& prev, double sd, double target) {
  const Masses w = Weigh(prev);
  const double top = prev.lo + prev.h * prev.f.size();
  double low = prev.edge > prev.lo ? prev.edge - kWidth * sd : prev.lo;
  double high = low + sd;
  while (high < top && Cross(prev, w, 0, sd, high) < target) {
    low = high;
    high += sd;
  }
  for (int i = 0; i < 60 && high - low > 1e-12; ++i) {
    const double mid = 0.5 * (low + high);
    (Cross(prev, w, 0, sd, mid) < target ? low : high) = mid;
  }
  return 0.5 * (low + high);
}

}  // namespace

double SpentAlpha(double alpha, double tau) {
  if (tau <= 0) return 0;
  if (tau >= 1) return alpha;
  const Normal z;
  const double edge = boost::math::quantile(z, 1 - alpha / 2);
  // The upper tail directly: 1 - cdf would round to 0 for small tau.
  return 2 *
         boost::math::cdf(boost::math::complement(z, edge / std::sqrt(tau)));
}

std::vector<double> HarmBoundaries(const std::vector<double>& fractions,
                                   double alpha) {
  std::vector<double> bounds;
  if (fractions.empty()) return bounds;
  double lo = 0, h = 0;
  size_t n = 0;
  Grid(fractions, 0, &lo, &h, &n);
  Density d;
  double previous = 0;
  for (size_t k = 0; k < fractions.size(); ++k) {
    const double t = fractions[k];
    const double spend = SpentAlpha(alpha, t) - SpentAlpha(alpha, previous);
    double b = -kNoBound;
    if (k == 0) {
      if (spend > kLeast) {
        b = std::sqrt(t) *
            boost::math::quantile(Normal(), std::max(spend, 1e-300));
      }
      d = FirstLook(t, 0, b, lo, h, n);
    } else {
      const double sd = std::sqrt(t - previous);
      if (spend > kLeast) b = Solve(d, sd, spend);
      d = Advance(d, 0, sd, b);
    }
    bounds.push_back(std::isinf(b) ? kNoBound : -b / std::sqrt(t));
    previous = t;
  }
  return bounds;
}

std::vector<HarmLook> PlannedHarmLooks(int planned, int first_look,
                                       double alpha) {
  first_look = std::max(first_look, 1);
  if (first_look > planned) return {};
  // Every step-th interval, ending at the last.
  const int step = (planned - first_look) / kMaxLooks + 1;
  std::vector<int> at;
  for (int k = planned; k >= first_look; k -= step) at.insert(at.begin(), k);
  std::vector<double> fractions;
  for (int k : at) fractions.push_back(static_cast<double>(k) / planned);
  const std::vector<double> z = HarmBoundaries(fractions, alpha);
  std::vector<HarmLook> looks;
  for (size_t i = 0; i < at.size() && i < z.size(); ++i) {
    looks.push_back({at[i], z[i]});
  }
  return looks;
}

double HarmBoundAt(const std::vector<HarmLook>& looks, int counted) {
  auto it = std::lower_bound(
      looks.begin(), looks.end(), counted,
      [](const HarmLook& look, int k) { return look.interval < k; });
  return it != looks.end() && it->interval == counted ? it->z : kNoBound;
}

double CrossingProbability(const std::vector<double>& fractions,
                           const std::vector<double>& bounds, double drift) {
  if (fractions.empty()) return 0;
  double lo = 0, h = 0;
  size_t n = 0;
  Grid(fractions, drift, &lo, &h, &n);
  auto edge = [&](size_t k) {
    return std::isinf(bounds[k]) ? -kNoBound
                                 : -bounds[k] * std::sqrt(fractions[k]);
  };
  const double t1 = fractions[0];
  double crossed =
      std::isinf(bounds[0]) ? 0 : Phi((edge(0) - drift * t1) / std::sqrt(t1));
  Density d = FirstLook(t1, drift, edge(0), lo, h, n);
  for (size_t k = 1; k < fractions.size() && k < bounds.size(); ++k) {
    const double step = fractions[k] - fractions[k - 1];
    const double mean = drift * step, sd = std::sqrt(step);
    const double b = edge(k);
    if (!std::isinf(b)) crossed += Cross(d, Weigh(d), mean, sd, b);
    d = Advance(d, mean, sd, b);
  }
  return crossed;
}

double MixtureHalfWidth(double variance, double alpha, double mixing_sd) {
  const double m2 = mixing_sd * mixing_sd;
  if (!(variance > 0)) return 0;
  const double grow = (variance + m2) / variance;
  return std::sqrt((variance + m2) / m2 *
                   (std::log(grow) + 2 * std::log(1 / alpha)));
}

GuardrailLook LookForHarm(double log_ratio, double se, double df,
                          double bound_z) {
  GuardrailLook look;
  if (se > 0 && df > 0) {
    look.p = boost::math::cdf(StudentT(df), log_ratio / se);
  } else {
    look.p = log_ratio < 0 ? 0 : 1;
  }
  look.bound = std::isinf(bound_z) ? 0 : Phi(-bound_z);
  look.stop = look.p <= look.bound && look.bound > 0;
  return look;
}

Sequence ConfidenceSequence(double log_ratio, double se, double df,
                            double alpha, double mixing_sd) {
  Sequence s;
  const double z = MixtureHalfWidth(se * se, alpha, mixing_sd);
  double half = z * se;
  if (df > 0 && z > 0) {
    // The same tail in Student's t: exact when se is known, wider when not.
    const double tail = 0.5 * std::erfc(z / std::sqrt(2.0));
    half =
        boost::math::quantile(boost::math::complement(StudentT(df), tail)) * se;
  }
  s.low = std::exp(log_ratio - half);
  s.high = std::exp(log_ratio + half);
  return s;
}

}  // namespace locus::experiment
