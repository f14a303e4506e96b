// The switchback design (`locusctl experiment start --design=switchback`):
// the whole host alternates between Locus on (its levers act) and off
// (everything put back, as on restore), in blocks. Pure.
//
// Why: the A/B design splits workers inside one host, so it cannot judge a
// lever that acts on the whole host (a NIC queue carries both arms), and
// shared CPUs, caches and memory bandwidth couple its arms. A switchback
// compares the host with itself: the blocks come in pairs, one on and one
// off in an order drawn at random per pair, so what moves the whole host
// from one block to the next (the traffic's level, a batch job) falls on
// both of a pair alike, and its drift within a pair is as often in favour
// of on as of off.
//
// The estimate: per pair, d = log(on's figure / off's figure); their mean
// is the log ratio, with Student's t interval on the pairs (one observation
// each: whatever varies inside a block, a pair is the unit the order was
// drawn for). The first intervals of each block are not counted (the
// burn-in: pins, page moves and IRQ moves take time to settle, and so does
// putting them back), so a pair compares steady states.
#ifndef LOCUS_POLICY_EXPERIMENT_SWITCHBACK_H_
#define LOCUS_POLICY_EXPERIMENT_SWITCHBACK_H_

#include <cstdint>
#include <vector>

#include "policy/experiment_ratio.h"

namespace locus::experiment {

// Whether each block has Locus on, for `pairs` pairs: each pair one on and
// one off, which first drawn from `seed`. Deterministic for a seed, so a
// report's seed reproduces its order.
std::vector<bool> SwitchbackSchedule(uint32_t pairs, uint64_t seed);

// One block's figure (higher or lower is better as the caller reads it).
struct BlockFigure {
  uint32_t pair = 0;
  bool on = false;
  double value = 0;       // > 0 to be used
  bool complete = false;  // ran to its end (a stopped run's last may not)
};

// on / off over the pairs whose two blocks are complete with positive
// figures: `treated` is the pairs used, `control` the same, df pairs - 1.
// Fewer than two such pairs give no interval (valid false, why_not says).
RatioEstimate PairedRatio(const std::vector<BlockFigure>& blocks,
                          double level = 0.95);

}  // namespace locus::experiment

#endif  // LOCUS_POLICY_EXPERIMENT_SWITCHBACK_H_
