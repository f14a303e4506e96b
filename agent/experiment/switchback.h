// The switchback design (`locusctl experiment start --design=switchback`,
// policy/experiment_switchback.h says why and how it is estimated): the
// whole host alternates between Locus on and off, block by block, on the
// interval grid of the run. These keep its blocks on the running experiment
// (units.h), without a clock or a lock of their own; the runner calls them.
#ifndef LOCUS_AGENT_EXPERIMENT_SWITCHBACK_H_
#define LOCUS_AGENT_EXPERIMENT_SWITCHBACK_H_

#include <cstdint>
#include <string>

#include "agent/core/ports.h"
#include "agent/experiment/units.h"
#include "locus/v1/agent.pb.h"

namespace locus {

// Makes `run` a switchback of `pairs` pairs of blocks of `block_intervals`
// intervals each, in the order drawn from run.seed: every unit counted
// alike (none is left alone in an on block), the first block under way.
void BeginSwitchback(RunningExperiment& run, uint32_t pairs,
                     uint32_t block_intervals);

// Units that joined since: counted like the others.
void JoinSwitchback(RunningExperiment& run);

// Before an interval's reads are added (AddInterval): the host's busy time
// since the last interval goes to the block when the interval counts (its
// burn-in is over).
void BeforeBlockInterval(RunningExperiment& run);
// After: at the block's last interval it is closed (its figures), the
// estimates are made again, and the next block begins (its units' burn-in
// anew; an off block asks the loop to put everything back).
void AfterBlockInterval(RunningExperiment& run);
// The run ends before the planned end: the block under way is closed,
// incomplete (not used by the estimate), and the estimates made again.
void CloseBlockEarly(RunningExperiment& run);

// What the loop is asked this tick: nothing left alone; in an off block
// everything held (put back on its first tick).
void SwitchbackArms(RunningExperiment& run, ArmsThisTick& arms);

// The switchback's fields of the report.
void AddBlocks(const RunningExperiment& run, v1::ExperimentReport& report);

// "Locus on: +3.1 % host bytes per CPU-second [...]; p99 ..." or why not.
std::string SwitchbackVerdict(const v1::ExperimentReport& report);

}  // namespace locus

#endif  // LOCUS_AGENT_EXPERIMENT_SWITCHBACK_H_
