#include "policy/apportion.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace locus {

std::vector<int> Apportion(int total, const std::vector<double>& weights,
                           const std::vector<int>& prefer) {
  std::vector<int> out(weights.size(), 0);
  double sum = 0;
  for (double w : weights) sum += w;
  if (total <= 0 || sum <= 0) return out;
  std::vector<std::pair<double, int>> remainders;
  int given = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    double exact = total * weights[i] / sum;
    out[i] = static_cast<int>(std::floor(exact));
    given += out[i];
    // Rounded so that remainders equal but for floating-point noise tie.
    double remainder = std::round((exact - out[i]) * 1e9) / 1e9;
    remainders.push_back({remainder, static_cast<int>(i)});
  }
  auto preferred = [&](int i) {
    return i < static_cast<int>(prefer.size()) ? prefer[i] : 0;
  };
  std::stable_sort(remainders.begin(), remainders.end(),
                   [&](const auto& a, const auto& b) {
                     if (a.first != b.first) return a.first > b.first;
                     return preferred(a.second) > preferred(b.second);
                   });
  for (int i = 0; given < total; ++i, ++given) {
    ++out[remainders[i % remainders.size()].second];
  }
  return out;
}

}  // namespace locus
