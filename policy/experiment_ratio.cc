#include "policy/experiment_ratio.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "policy/experiment_t.h"

namespace locus::experiment {
namespace {

struct Cell {
  std::vector<const UnitTotals*> units;
};

struct Stratum {
  Cell arm[2];  // indexed by Arm
};

// One cell (a stratum's arm) linearised: its log ratio of totals and each
// worker's influence on it.
struct Linear {
  bool ok = false;
  double cpu = 0;
  double log_ratio = 0, pre_log_ratio = 0;
  bool has_pre = true;
  std::vector<double> u, x, k;  // influence, pre-period influence, 1/shrink
  double square = 0;            // Square(), for the df
};

// For Satterthwaite's df of sum_i k_i h_i^2 (y_i - yhat)^2 (yhat = sum h_i
// y_i) under the model the ratio of totals is best for, Var(y_i) = s^2 /
// cpu_i: its residuals' covariance is s^2 / cpu (diag(1 / h) - 11'), so
// with A = diag(k h^2) and k = 1 / (1 - h), tr(A Cov) = s^2 / cpu and
// tr((A Cov)^2) = (s^2 / cpu)^2 (sum_i h_i^2 + sum_{i != j} a_i a_j). For n
// equal workers the ratio of squares is n - 1.
double Square(const std::vector<double>& h, const std::vector<double>& k) {
  double square = 0, sum = 0, sum2 = 0;
  for (size_t i = 0; i < h.size(); ++i) {
    const double a = k[i] * h[i] * h[i];
    const double diagonal = k[i] * h[i] * (1 - h[i]);
    square += diagonal * diagonal;
    sum += a;
    sum2 += a * a;
  }
  return square + sum * sum - sum2;
}

Linear Linearise(const Cell& cell) {
  Linear l;
  double work = 0, pre_work = 0, pre_cpu = 0;
  for (const UnitTotals* u : cell.units) {
    work += u->work;
    l.cpu += u->cpu_seconds;
    pre_work += u->pre_work;
    pre_cpu += u->pre_cpu_seconds;
    l.has_pre = l.has_pre && u->pre_cpu_seconds > 0;
  }
  if (!(work > 0) || !(l.cpu > 0)) return l;
  l.has_pre = l.has_pre && pre_work > 0;
  const double ratio = work / l.cpu;
  const double pre_ratio = l.has_pre ? pre_work / pre_cpu : 0;
  l.log_ratio = std::log(ratio);
  if (l.has_pre) l.pre_log_ratio = std::log(pre_ratio);
  std::vector<double> h;
  for (const UnitTotals* u : cell.units) h.push_back(u->cpu_seconds / l.cpu);
  for (size_t i = 0; i < h.size(); ++i) {
    const UnitTotals& unit = *cell.units[i];
    l.u.push_back((unit.work - ratio * unit.cpu_seconds) / work);
    l.x.push_back(l.has_pre
                      ? (unit.pre_work - pre_ratio * unit.pre_cpu_seconds) /
                            pre_work
                      : 0);
    // Its expected shrinkage; none left when one worker holds all the CPU.
    const double shrink = 1 - h[i];
    l.k.push_back(shrink > 1e-9 ? 1 / shrink : 1);
  }
  l.square = Square(h, l.k);
  l.ok = true;
  return l;
}

// Groups the usable units by stratum and arm; counts what is left out.
std::map<int, Stratum> Group(const std::vector<UnitTotals>& units,
                             RatioEstimate& e) {
  std::map<int, Stratum> strata;
  for (const UnitTotals& u : units) {
    // Neither work nor CPU time (or NaN): nothing to count.
    if (!(u.cpu_seconds > 0) && !(u.work > 0)) {
      ++e.left_out;
      continue;
    }
    strata[u.stratum].arm[static_cast<int>(u.arm)].units.push_back(&u);
  }
  std::map<int, Stratum> both;
  bool thin = false;
  for (auto& [id, s] : strata) {
    const size_t t = s.arm[1].units.size(), c = s.arm[0].units.size();
    if (t == 0 || c == 0) {
      e.dropped += static_cast<int>(t + c);
      continue;
    }
    thin = thin || t < 2 || c < 2;
    both[id] = std::move(s);
  }
  if (!thin || both.size() < 2) return both;
  // A cell of one worker has no variance: compare the host as one stratum.
  Stratum all;
  for (auto& [id, s] : both) {
    for (int a = 0; a < 2; ++a) {
      for (const UnitTotals* u : s.arm[a].units) all.arm[a].units.push_back(u);
    }
  }
  e.collapsed = true;
  return {{0, std::move(all)}};
}

struct Combined {
  double d = 0, d_pre = 0;
  double cov = 0, pre_var = 0;  // for theta
  bool has_pre = true;
};

// The contrast over the strata, weighted by CPU share, with theta's pieces.
Combined Contrast(const std::vector<Linear>& cells, double cpu) {
  Combined c;
  for (size_t i = 0; i + 1 < cells.size(); i += 2) {
    const Linear &control = cells[i], &treated = cells[i + 1];
    const double w = (control.cpu + treated.cpu) / cpu;
    c.d += w * (treated.log_ratio - control.log_ratio);
    c.d_pre += w * (treated.pre_log_ratio - control.pre_log_ratio);
    c.has_pre = c.has_pre && control.has_pre && treated.has_pre;
    for (const Linear* l : {&control, &treated}) {
      for (size_t j = 0; j < l->u.size(); ++j) {
        c.cov += w * w * l->k[j] * l->u[j] * l->x[j];
        c.pre_var += w * w * l->k[j] * l->x[j] * l->x[j];
      }
    }
  }
  return c;
}

// The variance of d - theta d_pre, and its df: Satterthwaite's from the
// design (the workers' CPU shares, the cells' CPU and the strata's
// weights) as Bell and McCaffrey do; not Welch's from the cells' estimated
// variances, which with 2 to 8 workers a cell are too noisy themselves
// and would halve the df.
void Variance(const std::vector<Linear>& cells, double cpu, double theta,
              double* var, double* df) {
  double sum = 0, trace = 0, square = 0;
  for (size_t i = 0; i + 1 < cells.size(); i += 2) {
    const double w = (cells[i].cpu + cells[i + 1].cpu) / cpu;
    for (size_t a = i; a < i + 2; ++a) {
      const Linear& l = cells[a];
      for (size_t j = 0; j < l.u.size(); ++j) {
        const double r = l.u[j] - theta * l.x[j];
        sum += w * w * l.k[j] * r * r;
      }
      const double scale = w * w / (l.cpu / cpu);
      trace += scale;
      square += scale * scale * l.square;
    }
  }
  *var = sum;
  *df = square > 0 ? trace * trace / square : 1;
}

void Finish(double d, double var, double df, double level, RatioEstimate& e) {
  e.log_ratio = d;
  e.se = std::sqrt(var);
  e.df = std::max(1.0, df);
  const TInterval i = IntervalOf(d, e.se, e.df, level);
  e.ratio = i.ratio;
  e.low = i.low;
  e.high = i.high;
  e.detectable = i.detectable;
  e.valid = true;
}

}  // namespace

RatioEstimate EstimateTotals(const std::vector<UnitTotals>& units, double level,
                             bool cuped) {
  RatioEstimate e;
  const std::map<int, Stratum> strata = Group(units, e);
  std::vector<Linear> cells;  // control, treated of each stratum in turn
  double cpu = 0;
  for (const auto& [id, s] : strata) {
    e.control += static_cast<int>(s.arm[0].units.size());
    e.treated += static_cast<int>(s.arm[1].units.size());
    for (int a = 0; a < 2; ++a) {
      cells.push_back(Linearise(s.arm[a]));
      cpu += cells.back().cpu;
    }
  }
  e.strata = static_cast<int>(strata.size());
  bool ok = !cells.empty() && e.treated >= 2 && e.control >= 2;
  for (const Linear& l : cells) ok = ok && l.ok;
  if (!ok) {
    e.why_not = absl::StrCat(
        "needs at least 2 workers in each arm, and work and CPU time in each "
        "arm of each stratum compared (has ",
        e.treated, " treated, ", e.control, " control; left out: ", e.left_out,
        " without work or CPU time, ", e.dropped,
        " in strata without the other arm)");
    return e;
  }
  const Combined c = Contrast(cells, cpu);
  double var = 0, df = 0;
  Variance(cells, cpu, 0, &var, &df);
  if (!cuped || !c.has_pre || !(c.pre_var > 0)) {
    Finish(c.d, var, df, level, e);
    return e;
  }
  e.adjusted = true;
  const double theta = c.cov / c.pre_var;
  double adjusted = 0;
  Variance(cells, cpu, theta, &adjusted, &df);
  e.variance_reduction = var > 0 ? 1 - adjusted / var : 0;
  // One degree of freedom pays for theta.
  Finish(c.d - theta * c.d_pre, adjusted, df - 1, level, e);
  return e;
}

}  // namespace locus::experiment
