#include "agent/experiment/switchback.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/experiment/arm_figures.h"
#include "agent/experiment/report.h"
#include "policy/experiment_latency.h"
#include "policy/experiment_switchback.h"

namespace locus {
namespace {

// The block under way begins: each unit's burn-in anew (its first intervals
// are the host settling into the block's state), its sums from here.
void StartBlock(RunningExperiment& run) {
  run.block_measured = 0;
  for (Unit& unit : run.units) unit.burned = 0;
  run.block_start = SumArm(run, std::nullopt);
  run.block_busy_ns = 0;
  run.busy_mark_ns = run.host_busy_ns;
  if (!run.schedule[run.block]) run.restore_pending = true;
}

bool BlockOpen(const RunningExperiment& run) {
  return run.blocks.size() <= run.block;
}

// The block under way as it stands: which it is, and its intervals counted
// so far (those after its burn-in).
v1::ExperimentBlock BlockUnderWay(const RunningExperiment& run) {
  v1::ExperimentBlock block;
  block.set_index(run.block);
  block.set_pair(run.block / 2);
  block.set_on(run.schedule[run.block]);
  block.set_intervals(
      run.block_measured > run.burn_in ? run.block_measured - run.burn_in : 0);
  return block;
}

void CloseBlock(RunningExperiment& run, bool complete) {
  const ArmSums sums = Since(SumArm(run, std::nullopt), run.block_start);
  v1::ExperimentBlock block = BlockUnderWay(run);
  block.set_complete(complete);
  const double busy_s = run.block_busy_ns / 1e9;
  block.set_bytes(sums.bytes);
  block.set_host_busy_seconds(busy_s);
  block.set_bytes_per_cpu_second(busy_s > 0 ? sums.bytes / busy_s : 0);
  block.set_requests(sums.requests);
  block.set_p99_us(experiment::Quantile(sums.service_us, 0.99).value_or(0));
  block.set_wait_per_cpu_second(sums.cpu_ns > 0 ? sums.wait_ns / sums.cpu_ns
                                                : 0);
  if (complete) AddSums(run.block_sums[block.on() ? 1 : 0], sums);
  run.blocks.push_back(std::move(block));
}

// One figure of every block, paired on / off, as a report's estimate.
v1::ExperimentEstimate Paired(const RunningExperiment& run,
                              double (v1::ExperimentBlock::*figure)() const,
                              const std::string& metric) {
  std::vector<experiment::BlockFigure> figures;
  for (const v1::ExperimentBlock& block : run.blocks) {
    figures.push_back(
        {block.pair(), block.on(), (block.*figure)(), block.complete()});
  }
  v1::ExperimentEstimate out =
      EstimateProto(experiment::PairedRatio(figures), metric, /*live=*/false);
  out.set_estimator("paired blocks, on / off");
  return out;
}

void EstimateBlocks(RunningExperiment& run) {
  run.work = Paired(run, &v1::ExperimentBlock::bytes_per_cpu_second,
                    "host_bytes_per_cpu_second");
  run.service_p99 =
      Paired(run, &v1::ExperimentBlock::p99_us, "p99_service_time");
  run.run_queue_wait = Paired(run, &v1::ExperimentBlock::wait_per_cpu_second,
                              "run_queue_wait_per_cpu_second");
  run.treated_figures = Figures(run.block_sums[1]);
  run.control_figures = Figures(run.block_sums[0]);
}

}  // namespace

void BeginSwitchback(RunningExperiment& run, uint32_t pairs,
                     uint32_t block_intervals) {
  run.switchback = true;
  run.schedule = experiment::SwitchbackSchedule(pairs, run.seed);
  run.block_intervals = block_intervals;
  run.block = 0;
  // The guardrails compare arms at once; the off blocks are the kernel
  // alone already, and a pair is not judged before both of it ran.
  run.harm_looks.clear();
  run.latency_looks.clear();
  JoinSwitchback(run);
  StartBlock(run);
}

void JoinSwitchback(RunningExperiment& run) {
  for (Unit& unit : run.units) unit.arm = experiment::Arm::kTreated;
}

void BeforeBlockInterval(RunningExperiment& run) {
  if (BlockOpen(run) && run.block_measured >= run.burn_in)
    run.block_busy_ns += run.host_busy_ns - run.busy_mark_ns;
  run.busy_mark_ns = run.host_busy_ns;
}

void AfterBlockInterval(RunningExperiment& run) {
  if (!BlockOpen(run)) return;
  if (++run.block_measured < run.block_intervals) return;
  CloseBlock(run, /*complete=*/true);
  EstimateBlocks(run);
  if (run.block + 1 < run.schedule.size()) {
    ++run.block;
    StartBlock(run);
  }
}

void CloseBlockEarly(RunningExperiment& run) {
  if (!run.switchback || !BlockOpen(run) || run.block_measured == 0) return;
  CloseBlock(run, /*complete=*/false);
  EstimateBlocks(run);
}

void SwitchbackArms(RunningExperiment& run, ArmsThisTick& arms) {
  arms.untreated.clear();
  if (!BlockOpen(run) || run.schedule[run.block]) return;
  arms.off = true;
  arms.restore = run.restore_pending;
  run.restore_pending = false;
}

void AddBlocks(const RunningExperiment& run, v1::ExperimentReport& report) {
  for (const v1::ExperimentBlock& block : run.blocks)
    *report.add_blocks() = block;
  // The block under way, so far (not counted until it ends).
  if (BlockOpen(run)) *report.add_blocks() = BlockUnderWay(run);
}

std::string SwitchbackVerdict(const v1::ExperimentReport& report) {
  const v1::ExperimentEstimate& work = report.work();
  if (!work.valid()) {
    return absl::StrCat("no estimate yet: ", work.why_not().empty()
                                                 ? "no block has ended"
                                                 : work.why_not());
  }
  auto change = [](const v1::ExperimentEstimate& e) {
    return e.valid()
               ? absl::StrCat(PercentChange(e.ratio()), " ", PercentBounds(e))
               : std::string("n/a");
  };
  const std::string figures = absl::StrCat(
      PercentChange(work.ratio()), " host bytes per CPU-second ",
      PercentBounds(work), "; p99 service time ", change(report.service_p99()),
      ", run-queue wait per CPU-second ", change(report.run_queue_wait()), " (",
      work.df() + 1, " pairs of blocks)");
  const bool early = report.state() != v1::EXPERIMENT_STATE_DONE &&
                     report.intervals() < report.planned();
  if (early) {
    // A t interval holds when read once, at the end planned: read before
    // it, it is a glimpse, and is not called significant.
    return absl::StrCat(report.state() == v1::EXPERIMENT_STATE_RUNNING
                            ? "running, not conclusive until its last block: "
                            : "inconclusive (stopped before its last block): ",
                        "Locus on vs off so far ", figures);
  }
  if (work.significant()) {
    return absl::StrCat("Locus on: ", figures, ", significant",
                        work.ratio() < 1 ? ": harmful here" : "");
  }
  return absl::StrFormat(
      "no significant difference between Locus on and off: %s (could detect "
      "±%.1f %%)",
      figures, work.detectable() * 100);
}

}  // namespace locus
