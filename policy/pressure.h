// How saturated each node's CPUs are, for the soft home (placement.spill):
// busy from every task (/proc/stat), the share of it the targets' own
// threads account for, and how long the targets wait on run queues.
// Pure functions of a snapshot; the loop keeps the streaks in History
// (ObservePressure) so that Decide can ask "for how long?" and stay pure.
#ifndef LOCUS_POLICY_PRESSURE_H_
#define LOCUS_POLICY_PRESSURE_H_

#include <vector>

#include "locus/v1/policy.pb.h"
#include "policy/history.h"
#include "policy/snapshot.h"

namespace locus {

// Saturated means busy >= busy_above; calm means the load that is not the
// targets' own is this far below it. The band is the hysteresis: a node
// between the two is neither, and a worker's spill stays as it is.
inline constexpr double kSpillCalmBand = 0.15;

struct NodePressure {
  double busy = 0;  // mean over its CPUs: busy_all, else the sensor's busy
  // Share of its CPUs' time the targets' threads ran there (runtime over
  // the tick); busy - ours is the load of everything else.
  double ours = 0;
  // Run-queue wait over the tick, seconds per second, of the targets'
  // threads that last ran here: the most one target waited (what
  // wait_above is compared with), and all of them together (what the
  // stream and Prometheus show per node).
  double wait = 0;
  double wait_total = 0;
  int cpus = 0;
  // busy >= busy_above and wait >= wait_above.
  bool saturated = false;
  // busy >= busy_above, whatever the wait: what keeps a saturated streak
  // going (ObservePressure).
  bool loaded = false;
  // busy - ours < busy_above - kSpillCalmBand: the load that drove a worker
  // out has gone. Not judged on wait: a widened worker no longer waits,
  // because it is widened.
  bool calm = false;
  double others() const { return busy > ours ? busy - ours : 0; }
};

// Per node, indexed like snapshot.topology.nodes.
std::vector<NodePressure> MeasurePressure(const Snapshot& snapshot,
                                          const v1::Spill& spill);

// Called by the loop once per tick, before Decide: starts or ends each
// node's saturated and calm streaks in `history`. A saturated streak starts
// when the node is saturated and lasts while it stays loaded: the wait is
// the symptom, and a worker whose requests come in bursts waits in bursts,
// so a tick of less waiting under the same load does not start the count
// again; a tick below busy_above does. A calm streak ends at any tick that
// is not calm: narrowing confines, and asks for unbroken calm.
void ObservePressure(History& history, const Snapshot& snapshot,
                     const v1::Policy& policy);

}  // namespace locus

#endif  // LOCUS_POLICY_PRESSURE_H_
