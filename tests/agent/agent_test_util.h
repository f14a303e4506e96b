// Test doubles for the agent's gRPC surface: a controller with canned
// answers, a publisher standing in for the control loop, a temporary socket
// directory, and a way to run the real locusctl binary.
#ifndef LOCUS_TESTS_AGENT_AGENT_TEST_UTIL_H_
#define LOCUS_TESTS_AGENT_AGENT_TEST_UTIL_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/api/agent_controller.h"
#include "agent/api/metrics_hub.h"

namespace locus {

// Answers like a daemon in dry-run with one known thread (tid 1234) and one
// known IRQ (45); records the mutating calls it receives. The experiment
// calls answer what the test set (by default: start echoes a running report,
// get NOT_FOUND, stop FAILED_PRECONDITION, as the daemon does with none).
class FakeController : public AgentController {
 public:
  absl::StatusOr<v1::AgentStatus> GetStatus() override;
  absl::StatusOr<v1::ExplainResponse> Explain(
      const v1::ExplainRequest& request) override;
  absl::StatusOr<v1::SetModeResponse> SetMode(
      const v1::SetModeRequest& request) override;
  absl::StatusOr<v1::RestoreResponse> Restore(
      const v1::RestoreRequest& request) override;
  absl::StatusOr<v1::ProbeReport> Probe() override;
  absl::StatusOr<v1::ExperimentReport> StartExperiment(
      const v1::StartExperimentRequest& request) override;
  absl::StatusOr<v1::ExperimentReport> GetExperiment() override;
  absl::StatusOr<v1::ExperimentReport> StopExperiment(
      const v1::StopExperimentRequest& request) override;

  int set_mode_calls() const;
  int restore_calls() const;
  v1::AgentMode mode() const;

  // Replies to the next experiment calls (until set again).
  void set_start_reply(absl::StatusOr<v1::ExperimentReport> reply);
  void set_get_reply(absl::StatusOr<v1::ExperimentReport> reply);
  void set_stop_reply(absl::StatusOr<v1::ExperimentReport> reply);
  // The requests received, oldest first.
  std::vector<v1::StartExperimentRequest> start_requests() const;
  std::vector<v1::StopExperimentRequest> stop_requests() const;
  int get_experiment_calls() const;

 private:
  mutable absl::Mutex mu_;
  v1::AgentMode mode_ ABSL_GUARDED_BY(mu_) = v1::AGENT_MODE_DRY_RUN;
  int set_mode_calls_ ABSL_GUARDED_BY(mu_) = 0;
  int restore_calls_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<absl::StatusOr<v1::ExperimentReport>> start_reply_
      ABSL_GUARDED_BY(mu_);
  absl::StatusOr<v1::ExperimentReport> get_reply_ ABSL_GUARDED_BY(mu_) =
      absl::NotFoundError("no experiment has run since the agent started");
  absl::StatusOr<v1::ExperimentReport> stop_reply_ ABSL_GUARDED_BY(mu_) =
      absl::FailedPreconditionError("no experiment is running");
  std::vector<v1::StartExperimentRequest> start_requests_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::StopExperimentRequest> stop_requests_ ABSL_GUARDED_BY(mu_);
  int get_experiment_calls_ ABSL_GUARDED_BY(mu_) = 0;
};

// A finished experiment of 4 workers with a significant gain, a note, a
// unit lost, and a worker whose comm carries an escape sequence and a
// newline (what a hostile process may call itself).
v1::ExperimentReport SampleExperimentReport();
inline constexpr char kHostileComm[] = "ngx\x1b[2J\nroot#";

// One tick's worth of plausible metrics: 2 nodes, `tasks` nginx threads,
// one IRQ and one action.
v1::Metrics SyntheticMetrics(uint64_t tick, int tasks);

// Publishes SyntheticMetrics into a hub every `period` on its own thread, as
// the control loop will, and measures how long each Publish() took and when
// each tick actually happened.
class FakePublisher {
 public:
  FakePublisher(MetricsHub* hub, absl::Duration period, int tasks);
  ~FakePublisher();  // Stop()
  void Stop();

  // Every message from now on carries `report` as Metrics.experiment.
  void SetExperiment(const v1::ExperimentReport& report);
  uint64_t ticks() const { return ticks_; }
  absl::Duration max_publish_time() const;
  // The longest gap between two consecutive publishes.
  absl::Duration max_interval() const;

 private:
  void Run();

  MetricsHub* const hub_;
  const absl::Duration period_;
  const int tasks_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> ticks_{0};
  mutable absl::Mutex mu_;
  absl::Duration max_publish_ ABSL_GUARDED_BY(mu_);
  absl::Duration max_interval_ ABSL_GUARDED_BY(mu_);
  std::optional<v1::ExperimentReport> experiment_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

// A fresh directory under /tmp, removed with its contents.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out;
  std::string err;
};

// Runs `argv` (argv[0] a path) to completion, capturing both outputs; kills
// it after `timeout`.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         absl::Duration timeout = absl::Seconds(20));

// The same as another user: `argv` under setpriv(1) with `setpriv_options`
// ("--reuid=nobody", ...); empty options run it as is.
ProcessResult RunProcessAs(const std::vector<std::string>& setpriv_options,
                           const std::vector<std::string>& argv);

std::vector<std::string> SplitLines(const std::string& text);

}  // namespace locus

#endif  // LOCUS_TESTS_AGENT_AGENT_TEST_UTIL_H_
