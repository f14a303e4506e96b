// locusd's A/B experiment wired to the loop and the controller (a room of
// its own in agent/experiment; this is only how the daemon holds it).
#include "absl/time/clock.h"
#include "agent/config/policy_watcher.h"
#include "agent/core/loop.h"
#include "agent/daemon/controller.h"
#include "agent/daemon/daemon.h"
#include "agent/experiment/runner.h"
#include "agent/sensors/work_counter_bpf.h"
#include "common/log.h"

namespace locus {

// The A/B experiment: its counter of the workers' work, its record beside
// the journal (an experiment a crash cut short is reported as such), and
// the controller's calls.
void Daemon::MakeExperiment(ControllerHooks& hooks) {
  WorkCounterOptions counter_options;
  counter_options.procfs_root = options_.procfs_root;
  work_counter_ = MakeWorkCounter(counter_options);
  ExperimentOptions experiment_options;
  experiment_options.record_path = options_.journal_path + ".experiment";
  experiment_options.reply_wait = 3 * options_.tick;
  experiment_options.host = identity_.hostname;
  experiment_ = std::make_unique<ExperimentRunner>(
      experiment_options, work_counter_.get(),
      [] { return absl::ToUnixNanos(absl::Now()); });
  experiment_->LoadRecord();
  loop_->set_experiment(experiment_.get());
  // The guardrail found Locus harmful: it stops acting, as after a restore
  // (the controller exists by the time a tick can call this).
  experiment_->set_on_harm([this](const std::string& why) {
    v1::SetModeRequest request;
    request.set_mode(v1::AGENT_MODE_DRY_RUN);
    request.set_reason(why);
    if (absl::StatusOr<v1::SetModeResponse> set = controller_->SetMode(request);
        !set.ok()) {
      LogError("experiment guardrail: switching to dry run: ",
               set.status().ToString());
    }
  });
  ExperimentRunner* runner = experiment_.get();
  // What the request leaves unset comes from the policy in force.
  PolicyWatcher* watcher = watcher_.get();
  hooks.start_experiment =
      [runner, watcher](const v1::StartExperimentRequest& request, Mode mode) {
        return runner->Start(request, mode,
                             watcher->policy()->experiment().latency_margin());
      };
  hooks.get_experiment = [runner] { return runner->Get(); };
  hooks.stop_experiment = [runner](const v1::StopExperimentRequest& request) {
    return runner->Stop(request);
  };
}

}  // namespace locus
