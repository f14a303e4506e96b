// The A/B experiment (`locusctl experiment`): a randomised, concurrent test
// of Locus on one host's live traffic. The target workers are split at
// random into a treated arm (the policy acts on them as ever) and a control
// arm (put back as they were and left alone), stratified by server instance
// and node; both arms run at once under the same traffic, so the time of day
// cancels. Every interval each worker's work (bytes sent on its sockets,
// connections accepted) and CPU time are read, and the treated/control ratio
// of work per CPU-second is estimated with its 95 % interval
// (policy/experiment_stats.h says how and why). A sequential guardrail stops
// the experiment early when Locus is significantly harmful: the treated arm
// is put back and the agent switches to dry run.
//
// The loop calls OnTick on its thread; Start, Get, Stop and Interrupt come
// from RPC threads and the daemon's exit. The arms are written to the record
// file (with the report, each interval) before any worker is put back, so a
// crash mid-run is found at the next start and reported as interrupted,
// while the journal restores the workers as ever.
#ifndef LOCUS_AGENT_EXPERIMENT_RUNNER_H_
#define LOCUS_AGENT_EXPERIMENT_RUNNER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/core/mode.h"
#include "agent/core/ports.h"
#include "agent/experiment/units.h"
#include "agent/sensors/work_counter.h"
#include "policy/experiment_ratio.h"

namespace locus {

// Intervals left out after a worker's arm was set, unless the request says.
inline constexpr uint32_t kDefaultBurnIn = 2;
// A switchback's block, unless the request says.
inline constexpr absl::Duration kDefaultBlock = absl::Minutes(5);
// The latency guardrail's margin, unless the request or the policy says:
// treated p99 or run-queue wait 10 % worse than control, significantly,
// stops the run.
inline constexpr double kDefaultLatencyMargin = 0.10;

struct ExperimentOptions {
  // Where the running experiment and the last report are kept; empty:
  // nowhere (tests).
  std::string record_path;
  // The host's name, for the record a fleet pools.
  std::string host;
  absl::Duration default_duration = absl::Minutes(30);
  absl::Duration default_interval = absl::Seconds(10);
  absl::Duration min_interval = absl::Seconds(1);
  // The guardrail's total false-stop rate.
  double guardrail_alpha = 0.01;
  // Looks start at this interval counted after the burn-in.
  uint32_t guardrail_first_look = 3;
  // Two per arm: fewer cannot give an interval.
  size_t min_workers = 4;
  // How long Start and Stop wait for the loop's next tick to draw the arms
  // or end the experiment, so that their reply shows it; 0 (tests that
  // tick by hand): not at all.
  absl::Duration reply_wait = absl::ZeroDuration();
};

class ExperimentRunner : public ExperimentPort {
 public:
  // `counter` is borrowed; `wall_ns` gives the Unix time (ns) for reports.
  ExperimentRunner(ExperimentOptions options, WorkCounter* counter,
                   std::function<int64_t()> wall_ns);

  // Reads the record an earlier run left: an experiment it shows running
  // was cut short by a crash or kill, and becomes the last report.
  void LoadRecord();

  // The arms are drawn at the next tick (the reply shows them when it comes
  // within options.reply_wait). Refused while one runs, in dry run
  // (`mode`, the agent's now), with too few workers at the last tick, or
  // with a duration shorter than two intervals. `latency_margin` is the
  // policy's (experiment.latency_margin), for a request that sets none.
  absl::StatusOr<v1::ExperimentReport> Start(
      const v1::StartExperimentRequest& request, Mode mode,
      double latency_margin = kDefaultLatencyMargin);
  absl::StatusOr<v1::ExperimentReport> Get();
  // Ends at the next tick, with the estimate so far.
  absl::StatusOr<v1::ExperimentReport> Stop(
      const v1::StopExperimentRequest& request);
  // The agent is exiting (SIGTERM, restore): a running experiment ends
  // interrupted now; the daemon restores the workers as ever.
  void Interrupt(const std::string& why);

  // Called on the loop's thread when the guardrail stops an experiment,
  // with why: the daemon switches the agent to dry run.
  void set_on_harm(std::function<void(const std::string&)> on_harm) {
    on_harm_ = std::move(on_harm);
  }

  ArmsThisTick OnTick(const Snapshot& snapshot, Mode mode,
                      const PolicyState& policy,
                      const History& history) override;
  void OnConnections(const std::vector<SteeringState>& groups) override;

 private:
  struct Pending {
    v1::StartExperimentRequest request;
    uint64_t seed = 0;
    double planned_detectable = 0;  // with --min-effect
  };
  struct Sized {
    absl::Duration duration;
    double detectable = 0;
  };

  // With request.min_effect: the duration sized (or checked) from this
  // host's last experiment, or why it cannot reach it.
  absl::StatusOr<Sized> Preregister(const v1::StartExperimentRequest& request,
                                    absl::Duration duration,
                                    absl::Duration interval) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  void Begin(const Snapshot& snapshot, const Pending& pending,
             const PolicyState& policy, const History& history)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Workers that joined the run this tick: counted, recorded, and put back
  // when their arm (or the levers) leave them to the kernel.
  void Join(const std::vector<int32_t>& joined)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The start in the agent's log: the arms, or a switchback's order of
  // blocks.
  void LogStart() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The fewest workers a design measures: two per arm, or one for a
  // switchback (its arms are blocks of time).
  size_t LeastWorkers(bool switchback) const {
    return switchback ? 1 : options_.min_workers;
  }
  // Begin's steps: a start with too few workers ends at once, recorded.
  void AbortTooFew(const std::string& id, size_t found)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::unique_ptr<RunningExperiment> NewRun(
      std::vector<Unit> units, const Snapshot& snapshot, const Pending& pending,
      const PolicyState& policy, const std::string& id, int64_t now) const;
  void TakeBaselines() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Measure(const Snapshot& snapshot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EndPre(const Snapshot& snapshot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After an interval: estimates and the guardrail's look.
  // The estimates of the intervals so far into run_, with the confidence
  // sequence as their interval when `live`; the primary one returned.
  experiment::RatioEstimate Estimate(bool live)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Assess() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void End(v1::ExperimentState state, const std::string& reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The report of the running experiment, with or without its units and
  // series.
  v1::ExperimentReport Report(bool whole) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WriteRecord(const v1::ExperimentReport& report)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits up to options_.reply_wait for a tick after this call.
  void AwaitTick() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ExperimentOptions options_;
  WorkCounter* counter_;
  std::function<int64_t()> wall_ns_;
  std::function<void(const std::string&)> on_harm_;

  absl::Mutex mu_;
  std::optional<Pending> pending_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<RunningExperiment> run_ ABSL_GUARDED_BY(mu_);
  std::optional<v1::ExperimentReport> last_ ABSL_GUARDED_BY(mu_);
  // Workers at the last tick (Start refuses too few).
  size_t workers_seen_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t ticks_ ABSL_GUARDED_BY(mu_) = 0;
  // Set by End: OnTick reports the ended experiment once more, and, after
  // the guardrail, leaves and puts back every unit on that tick.
  std::shared_ptr<const v1::ExperimentReport> ended_ ABSL_GUARDED_BY(mu_);
  ArmsThisTick ending_ ABSL_GUARDED_BY(mu_);
};

}  // namespace locus

#endif  // LOCUS_AGENT_EXPERIMENT_RUNNER_H_
