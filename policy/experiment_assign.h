// The experiment's randomisation: which workers are treated and which are
// the control. Pure and deterministic for a seed, so a report's seed
// reproduces its arms.
#ifndef LOCUS_POLICY_EXPERIMENT_ASSIGN_H_
#define LOCUS_POLICY_EXPERIMENT_ASSIGN_H_

#include <cstdint>
#include <vector>

namespace locus::experiment {

enum class Arm : uint8_t { kControl = 0, kTreated = 1 };

struct UnitInfo {
  int32_t pid = 0;
  int node = -1;         // where it runs: the stratum
  int32_t instance = 0;  // its server instance (the master's pid)
};

// A random split, stratified so that each (instance, node) stratum has as
// many of each arm as it can: each stratum is shuffled and its units dealt
// to the arms in turn; the odd units left over, one per odd stratum, are
// dealt in a random order too, so the arms' sizes differ by at most one.
// One Arm per unit, in the order given.
std::vector<Arm> AssignArms(const std::vector<UnitInfo>& units, uint64_t seed);

}  // namespace locus::experiment

#endif  // LOCUS_POLICY_EXPERIMENT_ASSIGN_H_
