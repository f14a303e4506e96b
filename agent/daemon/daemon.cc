#include "agent/daemon/daemon.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/act/actuators.h"
#include "agent/act/connections/reuseport_kernel.h"
#include "agent/api/agent_server.h"
#include "agent/api/metrics_hub.h"
#include "agent/config/policy_watcher.h"
#include "agent/core/loop.h"
#include "agent/daemon/controller.h"
#include "agent/daemon/executor.h"
#include "agent/daemon/host_identity.h"
#include "agent/daemon/restore_mode.h"
#include "agent/daemon/snapshot_collector.h"
#include "agent/daemon/tick_publisher.h"
#include "agent/daemon/watchdog.h"
#include "agent/experiment/runner.h"
#include "agent/host/host_model.h"
#include "agent/host/topology.h"
#include "agent/sensors/accept_owners_bpf.h"
#include "agent/sensors/bpf_sensors.h"
#include "agent/sensors/capabilities.h"
#include "agent/sensors/libbpf_prober.h"
#include "agent/sensors/probe_report.h"
#include "agent/sensors/proc_sched.h"
#include "agent/sensors/source_plan.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/os_error.h"
#include "common/status_macros.h"

namespace locus {
namespace {

// The policy watcher as the loop's PolicySource.
class WatchedPolicy : public PolicySource {
 public:
  explicit WatchedPolicy(PolicyWatcher* watcher) : watcher_(watcher) {}
  PolicyState Current() override { return watcher_->state(); }

 private:
  PolicyWatcher* watcher_;
};

// `status` with "what: " before its message, for the log line.
absl::Status Saying(absl::string_view what, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat(what, ": ", status.message()));
}

absl::Status CheckCapabilities() {
  absl::StatusOr<std::vector<std::string>> missing = MissingAgentCapabilities();
  if (!missing.ok())
    return Saying("cannot read capabilities", missing.status());
  if (missing->empty()) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      "missing capability ", absl::StrJoin(*missing, ", "),
      ": locusd loads BPF sensors (CAP_BPF, CAP_PERFMON), sets other "
      "processes' CPU affinity and moves their pages (CAP_SYS_NICE, "
      "CAP_SYS_PTRACE); run it as root or under its systemd unit"));
}

// Blocks the signals the daemon handles in every thread it will start, and
// returns a signalfd that reports them.
absl::StatusOr<UniqueFd> BlockSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  UniqueFd fd(signalfd(-1, &set, SFD_CLOEXEC));
  if (!fd) return LastErrnoStatus("signalfd");
  return fd;
}

SensorOptions SensorOptionsFor(const Topology& topology,
                               const DaemonOptions& options) {
  SensorOptions s = options.sensors;
  s.procfs_root = options.procfs_root;
  s.numa_balancing = ReadNumaBalancing(options.procfs_root);
  s.SetTopology(topology);
  return s;
}

v1::RestoreResponse RestoreResponseOf(const RestoreReport& report) {
  v1::RestoreResponse response;
  response.set_restored(report.threads_restored + report.irqs_restored);
  response.set_failed(report.errors.size());
  for (const std::string& e : report.errors) response.add_errors(e);
  return response;
}

}  // namespace

Daemon::Daemon(DaemonOptions options) : options_(std::move(options)) {}

Daemon::~Daemon() {
  // A daemon started and never served still puts back what it changed.
  if (absl::Status restored = Stop(); !restored.ok()) {
    LogError("restore on exit: ", restored.message());
  }
}

absl::Status Daemon::Start() {
  RETURN_IF_ERROR(CheckWatchdog());
  RETURN_IF_ERROR(CheckCapabilities());
  ASSIGN_OR_RETURN(signal_fd_, BlockSignals());
  RETURN_IF_ERROR(TakeOverJournal());
  absl::StatusOr<Topology> topology = ReadTopology(options_.sysfs_root);
  if (!topology.ok()) {
    return Saying("reading the NUMA topology", topology.status());
  }
  RETURN_IF_ERROR(StartPolicyWatcher(*topology));
  OpenSensors(*topology);
  MakeCollector();
  RETURN_IF_ERROR(MakeExecutor(static_cast<int>(topology->nodes.size())));
  MakeLoop();
  RETURN_IF_ERROR(StartServer());
  Run();
  return absl::OkStatus();
}

// A tick the watchdog cannot cover would get the daemon killed at every
// long tick: refused before anything is changed.
absl::Status Daemon::CheckWatchdog() {
  std::optional<absl::Duration> interval = SystemdWatchdogInterval();
  if (!interval) return absl::OkStatus();
  RETURN_IF_ERROR(CheckTickCovered(options_.tick, *interval));
  watchdog_ = std::make_unique<Watchdog>(
      *interval, [this] { return loop_->ticks(); },
      [] { sd_notify(0, "WATCHDOG=1"); });
  return absl::OkStatus();
}

// Another daemon on the journal is fatal; a journal left by a crash is
// undone before anything else happens.
absl::Status Daemon::TakeOverJournal() {
  ASSIGN_OR_RETURN(lock_, LockJournal(options_.journal_path));
  if (!RestoreJournalAt(options_.journal_path, options_.sysfs_root,
                        options_.procfs_root)) {
    return absl::FailedPreconditionError(
        absl::StrCat("the journal ", options_.journal_path,
                     " left by an earlier run could not be fully restored; not "
                     "starting (see above)"));
  }
  return absl::OkStatus();
}

absl::Status Daemon::StartPolicyWatcher(const Topology& topology) {
  PolicyWatcherOptions watcher_options;
  watcher_options.path = options_.policy_path;
  watcher_options.host = topology;
  watcher_ = std::make_unique<PolicyWatcher>(std::move(watcher_options));
  policy_source_ = std::make_unique<WatchedPolicy>(watcher_.get());
  if (absl::Status status = watcher_->Start(); !status.ok()) {
    // The default stands in for an absent file only: one there but
    // unusable (a FIFO, a link to nothing) meant something else.
    return absl::Status(status.code(),
                        absl::StrCat("policy: ", status.message(),
                                     "; not starting: the built-in default "
                                     "replaces only an absent policy file"));
  }
  return absl::OkStatus();
}

// The best source each sensor can get; none at all still runs, on the host
// model alone.
void Daemon::OpenSensors(const Topology& topology) {
  LibbpfProber prober;
  FeatureSet features(&prober, options_.disabled_features);
  SourcePlan plan = ChooseSources(features);
  probe_ = std::make_unique<v1::ProbeReport>(ProbeReportOf(features, plan));
  absl::StatusOr<std::unique_ptr<SensorSource>> opened =
      OpenBpfSensors(SensorOptionsFor(topology, options_), plan);
  if (!opened.ok()) {
    LogWarning("BPF sensors unavailable (", opened.status().message(),
               ") → running on /proc and /sys alone");
    return;
  }
  sensors_ = *std::move(opened);
  SensorSources s = sensors_->sources();
  LogInfo("sensors: sched ", s.sched, ", numa ", s.numa, ", softirq ",
          s.softirq);
}

// How the host scan reads threads: the cheap way, their CPU from the sensors
// when they run, their affinity with sched_getaffinity(2) rather than status
// files. Without a scheduler sensor (none loaded, or every source forced
// off) the CPU comes from /proc.
TargetScanOptions Daemon::ScanOptions() const {
  TargetScanOptions scan;
  scan.read_thread_cpu =
      sensors_ == nullptr ||
      sensors_->sources().sched == SourceName(TraceSource::kNone);
  // Thread lists, numa_maps and the IRQs of no NIC are re-read every few
  // scans; thread lists and numa_maps at once for a new process, a changed
  // thread count, a process acted on or one whose threads moved to other
  // nodes (the collector marks those): at steady state they are most of a
  // scan's cost and rarely change.
  scan.refresh_every = 5;
  scan.read_affinity = [threads = scan_threads_.get()](int32_t tid,
                                                       std::vector<int>* cpus) {
    return threads->GetAffinity(tid, cpus);
  };
  return scan;
}

void Daemon::MakeCollector() {
  scan_threads_ = MakeKernelThreadOps(
      options_.procfs_root, ActuatorOptions{}.cgroup_root, options_.sysfs_root);
  HostModelOptions model_options;
  model_options.paths = HostPaths{options_.sysfs_root, options_.procfs_root};
  model_options.targets = TargetsOf(*watcher_->policy(), ScanOptions());
  collector_ = std::make_unique<SnapshotCollector>(
      CollectorOptions{options_.tick, model_options.paths},
      std::make_unique<HostModel>(model_options), sensors_.get(), RealClock(),
      MakeAcceptOwners(/*disable_bpf=*/false));
}

absl::Status Daemon::MakeExecutor(int nodes) {
  ActuatorOptions actuator_options;
  actuator_options.journal.path = options_.journal_path;
  actuator_options.sysfs_root = options_.sysfs_root;
  actuator_options.procfs_root = options_.procfs_root;
  actuator_options.migration =
      MigrationOptionsFor(watcher_->policy()->memory().budget_mb_per_s(),
                          absl::ToInt64Nanoseconds(options_.tick));
  actuator_options.page_movers = options_.page_movers > 0
                                     ? options_.page_movers
                                     : DefaultPageMovers(nodes);
  absl::StatusOr<std::unique_ptr<Actuators>> actuators =
      Actuators::Create(actuator_options, MakeKernelOps(actuator_options));
  if (!actuators.ok()) {
    return Saying(absl::StrCat("journal ", options_.journal_path),
                  actuators.status());
  }
  SteeringParts steering;
  steering.ops = MakeKernelReuseportOps();
  steering.finder = MakeProcListenerFinder(options_.procfs_root);
  steering.groups = [collector = collector_.get()] {
    return collector->listen_groups();
  };
  executor_ = std::make_unique<ActuatorExecutor>(
      *std::move(actuators), std::move(steering),
      MakeNeighbourOps(options_.procfs_root));
  return absl::OkStatus();
}

// The loop, what it does with each tick's report, and the controller that
// answers the API over both.
void Daemon::MakeLoop() {
  hub_ = std::make_unique<MetricsHub>();
  identity_ = ReadHostIdentity(options_.procfs_root);
  publisher_ = std::make_unique<TickPublisher>(
      options_.tick, hub_.get(), collector_.get(), executor_.get(),
      ScanOptions(), watcher_->state().version, identity_);
  LoopOptions loop_options;
  loop_options.tick = options_.tick;
  loop_options.mode = options_.mode;
  loop_ = std::make_unique<Loop>(
      loop_options, collector_.get(), policy_source_.get(), executor_.get(),
      [publisher = publisher_.get()](const TickReport& report) {
        publisher->Publish(report);
      },
      RealClock());

  ControllerHooks hooks;
  hooks.restore =
      [executor = executor_.get()]() -> absl::StatusOr<v1::RestoreResponse> {
    ASSIGN_OR_RETURN(RestoreReport report, executor->RestoreAllWithReport());
    return RestoreResponseOf(report);
  };
  hooks.probe = [probe = probe_.get()] { return *probe; };
  hooks.journal_entries = [executor = executor_.get()] {
    return executor->journal_entries();
  };
  hooks.journal_error = [executor = executor_.get()] {
    return executor->journal_error();
  };
  hooks.policy_mode = [watcher = watcher_.get()] {
    return PolicyMode(*watcher->policy());
  };
  MakeExperiment(hooks);
  ControllerOptions controller_options{
      .period = options_.tick,
      .version = options_.version,
      .mode_from_flag = options_.mode != v1::Policy::MODE_UNSPECIFIED,
      .identity = identity_,
      .journal_path = options_.journal_path};
  controller_ = std::make_unique<DaemonController>(
      loop_.get(), std::move(hooks), std::move(controller_options));
  publisher_->set_controller(controller_.get());
}

absl::Status Daemon::StartServer() {
  AgentServerOptions server_options;
  server_options.socket_path = options_.socket_path;
  server_options.socket_group = options_.socket_group;
  server_options.tcp_address = options_.tcp_address;
  absl::StatusOr<std::unique_ptr<AgentServer>> server =
      AgentServer::Start(server_options, hub_.get(), controller_.get());
  if (!server.ok()) {
    return Saying(absl::StrCat("socket ", options_.socket_path),
                  server.status());
  }
  server_ = *std::move(server);
  if (!options_.metrics_export.enabled()) return absl::OkStatus();
  ASSIGN_OR_RETURN(metrics_export_,
                   MetricsExport::Start(options_.metrics_export,
                                        {options_.version, KernelRelease()}));
  publisher_->set_metrics_export(metrics_export_.get());
  return absl::OkStatus();
}

void Daemon::Run() {
  collector_->Start();
  loop_thread_ = std::thread([this] { loop_->Run(stop_loop_); });
  if (watchdog_) watchdog_->Start();
  running_ = true;
  LogInfo("locusd ", options_.version, " running: tick ",
          absl::FormatDuration(options_.tick), ", socket ",
          options_.socket_path, ", journal ", options_.journal_path, ", mode ",
          ModeName(loop_->mode()));
  sd_notify(0, "READY=1");
}

int Daemon::Serve() {
  WaitForStopSignal();
  if (absl::Status restored = Stop(); !restored.ok()) {
    LogError("restore on exit: ", restored.message());
    return 1;
  }
  LogInfo("everything restored; bye");
  return 0;
}

// The main thread waits for signals and policy file changes.
void Daemon::WaitForStopSignal() {
  while (true) {
    pollfd fds[2] = {{signal_fd_.get(), POLLIN, 0},
                     {watcher_->fd(), POLLIN, 0}};
    if (poll(fds, watcher_->fd() >= 0 ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      LogError(ErrnoMessage("poll", errno));
      return;
    }
    if (fds[1].revents & POLLIN) watcher_->OnReadable();
    if ((fds[0].revents & POLLIN) && !OnSignal()) return;
  }
}

bool Daemon::OnSignal() {
  signalfd_siginfo info;
  if (read(signal_fd_.get(), &info, sizeof(info)) != sizeof(info)) return true;
  if (info.ssi_signo == SIGHUP) {
    LogInfo("SIGHUP → reloading ", options_.policy_path);
    watcher_->Reload();
    return true;
  }
  LogInfo(strsignal(info.ssi_signo), " → restoring everything and exiting");
  return false;
}

absl::Status Daemon::Stop() {
  if (!running_) return absl::OkStatus();
  running_ = false;
  sd_notify(0, "STOPPING=1");
  if (watchdog_) watchdog_->Stop();
  stop_loop_.Notify();
  loop_thread_.join();
  experiment_->Interrupt(
      "the agent was stopped (SIGTERM or SIGINT); every worker was restored");
  collector_->Stop();
  server_->Shutdown();
  hub_->Close();
  return executor_->RestoreAll();
}

int RunDaemon(const DaemonOptions& options) {
  Daemon daemon(options);
  if (absl::Status status = daemon.Start(); !status.ok()) {
    LogError(status.message());
    return 1;
  }
  return daemon.Serve();
}

}  // namespace locus
