#include "policy/experiment_assign.h"

#include <algorithm>
#include <map>
#include <random>
#include <utility>

namespace locus::experiment {
namespace {

// A uniform index below n from the engine: std::uniform_int_distribution's
// output differs between standard libraries, and a seed must give the same
// arms wherever the report is read.
size_t Below(std::mt19937_64& rng, size_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do {
    x = rng();
  } while (x >= limit);
  return static_cast<size_t>(x % n);
}

template <typename T>
void Shuffle(std::vector<T>& v, std::mt19937_64& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[Below(rng, i)]);
}

}  // namespace

std::vector<Arm> AssignArms(const std::vector<UnitInfo>& units, uint64_t seed) {
  std::mt19937_64 rng(seed);
  // Strata in a fixed order (std::map), units by their position.
  std::map<std::pair<int32_t, int>, std::vector<size_t>> strata;
  for (size_t i = 0; i < units.size(); ++i)
    strata[{units[i].instance, units[i].node}].push_back(i);
  std::vector<Arm> arms(units.size(), Arm::kControl);
  std::vector<size_t> odd;
  for (auto& [key, members] : strata) {
    Shuffle(members, rng);
    const Arm first = Below(rng, 2) ? Arm::kTreated : Arm::kControl;
    const Arm second = first == Arm::kTreated ? Arm::kControl : Arm::kTreated;
    size_t i = 0;
    for (; i + 1 < members.size(); i += 2) {
      arms[members[i]] = first;
      arms[members[i + 1]] = second;
    }
    if (i < members.size()) odd.push_back(members[i]);
  }
  Shuffle(odd, rng);
  const Arm first = Below(rng, 2) ? Arm::kTreated : Arm::kControl;
  for (size_t i = 0; i < odd.size(); ++i) {
    arms[odd[i]] = (i % 2 == 0) == (first == Arm::kTreated) ? Arm::kTreated
                                                            : Arm::kControl;
  }
  return arms;
}

}  // namespace locus::experiment
