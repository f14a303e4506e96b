#include "agent/daemon/daemon.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <set>
#include <thread>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "agent/act/actuators.h"
#include "agent/act/restore.h"
#include "agent/api/agent_server.h"
#include "agent/api/metrics_hub.h"
#include "agent/config/policy_watcher.h"
#include "agent/core/loop.h"
#include "agent/daemon/controller.h"
#include "agent/daemon/executor.h"
#include "agent/daemon/instance_lock.h"
#include "agent/daemon/metrics_convert.h"
#include "agent/daemon/snapshot_collector.h"
#include "agent/host/host_model.h"
#include "agent/host/topology.h"
#include "agent/sensors/bpf_sensors.h"
#include "agent/sensors/capabilities.h"
#include "agent/sensors/libbpf_prober.h"
#include "agent/sensors/probe_report.h"
#include "agent/sensors/proc_sched.h"
#include "agent/sensors/source_plan.h"
#include "common/log.h"
#include "policy/policy_yaml.h"

namespace locus {
namespace {

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + ts.tv_nsec;
}

// The policy watcher as the loop's PolicySource.
class WatchedPolicy : public PolicySource {
 public:
  explicit WatchedPolicy(PolicyWatcher* watcher) : watcher_(watcher) {}
  PolicyState Current() override { return watcher_->state(); }

 private:
  PolicyWatcher* watcher_;
};

// The host scan's selection from the policy, on top of how it reads threads.
TargetScanOptions TargetsOf(const v1::Policy& policy, TargetScanOptions base) {
  base.selector = TargetSelector{};
  base.selector.comms.assign(policy.targets().comm().begin(),
                             policy.targets().comm().end());
  return base;
}

SensorOptions SensorOptionsFor(const Topology& topology,
                               const DaemonOptions& options) {
  SensorOptions s = options.sensors;
  s.procfs_root = options.procfs_root;
  s.numa_balancing = ReadNumaBalancing(options.procfs_root);
  s.SetTopology(topology);
  return s;
}

// Blocks the signals the daemon handles in every thread it will start, and
// returns a signalfd that reports them.
int BlockSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return signalfd(-1, &set, SFD_CLOEXEC);
}

bool CheckCapabilities() {
  absl::StatusOr<std::vector<std::string>> missing = MissingAgentCapabilities();
  if (!missing.ok()) {
    LogError("cannot read capabilities: ", missing.status().message());
    return false;
  }
  if (missing->empty()) return true;
  LogError("missing capability ", absl::StrJoin(*missing, ", "),
           ": locusd loads BPF sensors (CAP_BPF, CAP_PERFMON), sets other "
           "processes' CPU affinity and moves their pages (CAP_SYS_NICE, "
           "CAP_SYS_PTRACE); run it as root or under its systemd unit");
  return false;
}

// The processes whose threads or memory this tick changed (or reverted).
std::set<int32_t> ProcessesActedOn(const TickReport& report) {
  std::set<int32_t> pids;
  auto add = [&](const Action& action) {
    if (const auto* pin = std::get_if<PinThread>(&action.op))
      pids.insert(pin->pid);
    if (const auto* move = std::get_if<MigratePages>(&action.op))
      pids.insert(move->pid);
  };
  // Only what changed the host: a dry run, or an action refused or
  // finding its entity already in place, leaves the last scan true.
  for (const ActionRecord& record : report.actions) {
    if (record.result.outcome == Outcome::kApplied) add(record.action);
  }
  for (const RevertRecord& revert : report.reverts) add(revert.verdict.action);
  return pids;
}

void LogRestore(const RestoreReport& report) {
  for (const std::string& line : report.messages) LogInfo(line);
  for (const std::string& line : report.errors) LogError(line);
  LogInfo("restored ", report.threads_restored, " thread(s) and ",
          report.irqs_restored, " IRQ(s); ", report.dropped, " no longer exist",
          report.truncated_tail ? "; the journal's last record was torn" : "");
}

}  // namespace

namespace {

// Another daemon holding the lock is fatal. A lock file that cannot be
// created (read-only or full journal directory) is not: the journal cannot be
// written either, so this process will change nothing, and it says so.
bool LockUnavailableButHarmless(const absl::Status& status) {
  if (absl::IsFailedPrecondition(status)) {
    LogError(status.message());
    return false;
  }
  LogWarning("no instance lock (", status.message(),
             "); the journal is not writable either, so nothing will be "
             "changed");
  return true;
}

// Restores what the journal holds; the caller holds the instance lock.
int RestoreLocked(const std::string& journal_path,
                  const std::string& sysfs_root,
                  const std::string& procfs_root) {
  ActuatorOptions options;
  options.journal.path = journal_path;
  options.sysfs_root = sysfs_root;
  options.procfs_root = procfs_root;
  KernelOps ops = MakeKernelOps(options);
  absl::StatusOr<RestoreReport> report =
      RestoreJournal(options.journal, *ops.threads, *ops.irqs);
  if (!report.ok()) {
    LogError("restore from ", journal_path, ": ", report.status().message());
    return 1;
  }
  LogRestore(*report);
  return report->ok() ? 0 : 1;
}

}  // namespace

int RunRestore(const std::string& journal_path, const std::string& sysfs_root,
               const std::string& procfs_root) {
  absl::StatusOr<InstanceLock> lock = InstanceLock::Acquire(journal_path);
  if (!lock.ok() && !LockUnavailableButHarmless(lock.status())) return 1;
  return RestoreLocked(journal_path, sysfs_root, procfs_root);
}

int RunCheckPolicy(const std::string& path, const std::string& sysfs_root) {
  absl::StatusOr<Topology> host = ReadTopology(sysfs_root);
  absl::StatusOr<v1::Policy> policy =
      LoadPolicyFile(path, host.ok() ? &*host : nullptr);
  if (!policy.ok()) {
    std::cerr << policy.status().message() << "\n";
    return 1;
  }
  std::cout << path << ": ok\n";
  return 0;
}

int RunDaemon(const DaemonOptions& options) {
  if (!CheckCapabilities()) return 1;
  int signal_fd = BlockSignals();
  if (signal_fd < 0) {
    LogError("signalfd: ", strerror(errno));
    return 1;
  }

  absl::StatusOr<InstanceLock> lock =
      InstanceLock::Acquire(options.journal_path);
  if (!lock.ok() && !LockUnavailableButHarmless(lock.status())) return 1;
  // A journal left by a crash is undone before anything else happens.
  if (int rc = RestoreLocked(options.journal_path, options.sysfs_root,
                             options.procfs_root);
      rc != 0) {
    LogError("the journal ", options.journal_path,
             " left by an earlier run could not be fully restored; not "
             "starting (see above)");
    return 1;
  }

  absl::StatusOr<Topology> topology = ReadTopology(options.sysfs_root);
  if (!topology.ok()) {
    LogError("reading the NUMA topology: ", topology.status().message());
    return 1;
  }

  PolicyWatcherOptions watcher_options;
  watcher_options.path = options.policy_path;
  watcher_options.host = *topology;
  PolicyWatcher watcher(watcher_options);
  if (absl::Status status = watcher.Start(); !status.ok()) {
    LogError("policy: ", status.message());
    return 1;
  }
  PolicyState policy = watcher.state();

  // Sensors: the best source each one can get; none at all still runs, on
  // the host model alone.
  LibbpfProber prober;
  FeatureSet features(&prober, options.disabled_features);
  SourcePlan plan = ChooseSources(features);
  v1::ProbeReport probe = ProbeReportOf(features, plan);
  std::unique_ptr<SensorSource> sensors;
  if (absl::StatusOr<std::unique_ptr<SensorSource>> opened =
          OpenBpfSensors(SensorOptionsFor(*topology, options), plan);
      opened.ok()) {
    sensors = *std::move(opened);
    SensorSources s = sensors->sources();
    LogInfo("sensors: sched ", s.sched, ", numa ", s.numa, ", softirq ",
            s.softirq);
  } else {
    LogWarning("BPF sensors unavailable (", opened.status().message(),
               ") → running on /proc and /sys alone");
  }

  HostModelOptions model_options;
  model_options.paths = HostPaths{options.sysfs_root, options.procfs_root};
  // Threads are read the cheap way: their CPU from the sensors when they
  // run, their affinity with sched_getaffinity(2) rather than status files.
  // Without a scheduler sensor (none loaded, or every source forced off) the
  // CPU comes from /proc.
  std::unique_ptr<ThreadOps> scan_threads = MakeKernelThreadOps(
      options.procfs_root, ActuatorOptions{}.cgroup_root, options.sysfs_root);
  TargetScanOptions scan;
  scan.read_thread_cpu =
      sensors == nullptr ||
      sensors->sources().sched == SourceName(TraceSource::kNone);
  // Thread lists, numa_maps and the IRQs of no NIC are re-read every few
  // scans; thread lists and numa_maps at once for a new process, a changed
  // thread count, a process acted on or one whose threads moved to other
  // nodes (the collector marks those): at steady state they are most of a
  // scan's cost and rarely change.
  scan.refresh_every = 5;
  scan.read_affinity = [threads = scan_threads.get()](int32_t tid,
                                                      std::vector<int>* cpus) {
    return threads->GetAffinity(tid, cpus);
  };
  model_options.targets = TargetsOf(*policy.policy, scan);
  CollectorOptions collector_options{options.tick, options.procfs_root};
  SnapshotCollector collector(collector_options,
                              std::make_unique<HostModel>(model_options),
                              sensors.get(), MonotonicNs);

  ActuatorOptions actuator_options;
  actuator_options.journal.path = options.journal_path;
  actuator_options.sysfs_root = options.sysfs_root;
  actuator_options.procfs_root = options.procfs_root;
  actuator_options.migration =
      MigrationOptionsFor(policy.policy->memory().budget_mb_per_s(),
                          absl::ToInt64Nanoseconds(options.tick));
  absl::StatusOr<std::unique_ptr<Actuators>> actuators =
      Actuators::Create(actuator_options, MakeKernelOps(actuator_options));
  if (!actuators.ok()) {
    LogError("journal ", options.journal_path, ": ",
             actuators.status().message());
    return 1;
  }
  ActuatorExecutor executor(*std::move(actuators));

  LoopOptions loop_options;
  loop_options.tick = options.tick;
  if (options.mode == "dry_run") loop_options.mode = v1::Policy::MODE_DRY_RUN;
  if (options.mode == "enforce") loop_options.mode = v1::Policy::MODE_ENFORCE;

  MetricsHub hub;
  WatchedPolicy policy_source(&watcher);
  DaemonController* controller_ptr = nullptr;
  uint64_t policy_version = policy.version;
  uint64_t watchdog_usec = 0;
  bool watchdog = sd_watchdog_enabled(0, &watchdog_usec) > 0;
  auto sink = [&](const TickReport& report) {
    MetricsContext context{options.tick, absl::Now(), collector.sensor_state()};
    v1::Metrics metrics = ToMetrics(report, context);
    if (controller_ptr != nullptr) controller_ptr->Update(metrics);
    hub.Publish(std::move(metrics));
    if (report.policy.version != policy_version) {
      policy_version = report.policy.version;
      collector.SetTargets(TargetsOf(*report.policy.policy, scan));
    }
    collector.SetManagedIrqs(executor.unmanageable_irqs());
    collector.MarkStale(ProcessesActedOn(report));
    if (watchdog) sd_notify(0, "WATCHDOG=1");
    size_t targets = report.snapshot ? report.snapshot->targets.size() : 0;
    sd_notify(
        0, absl::StrCat(
               "STATUS=tick ", report.tick, ", ", targets, " target(s), ",
               report.actions.size(), " action(s), mode ",
               report.mode == v1::Policy::MODE_DRY_RUN ? "dry_run" : "enforce")
               .c_str());
  };
  Loop loop(loop_options, &collector, &policy_source, &executor, sink,
            MonotonicNs);

  ControllerHooks hooks;
  hooks.restore = [&]() -> absl::StatusOr<v1::RestoreResponse> {
    absl::StatusOr<RestoreReport> report = executor.RestoreAllWithReport();
    if (!report.ok()) return report.status();
    v1::RestoreResponse response;
    response.set_restored(report->threads_restored + report->irqs_restored);
    response.set_failed(report->errors.size());
    for (const std::string& e : report->errors) response.add_errors(e);
    return response;
  };
  hooks.probe = [&] { return probe; };
  hooks.journal_entries = [&] { return executor.journal_entries(); };
  hooks.journal_error = [&] { return executor.journal_error(); };
  DaemonController controller(&loop, hooks, options.tick);
  controller_ptr = &controller;

  AgentServerOptions server_options;
  server_options.socket_path = options.socket_path;
  server_options.socket_group = options.socket_group;
  server_options.tcp_address = options.tcp_address;
  absl::StatusOr<std::unique_ptr<AgentServer>> server =
      AgentServer::Start(server_options, &hub, &controller);
  if (!server.ok()) {
    LogError("socket ", options.socket_path, ": ", server.status().message());
    return 1;
  }

  collector.Start();
  absl::Notification stop;
  std::thread loop_thread([&] { loop.Run(stop); });
  LogInfo("locusd ", LOCUS_VERSION, " running: tick ",
          absl::FormatDuration(options.tick), ", socket ", options.socket_path,
          ", journal ", options.journal_path, ", mode ",
          loop.mode() == v1::Policy::MODE_DRY_RUN ? "dry_run" : "enforce");
  sd_notify(0, "READY=1");

  // The main thread waits for signals and policy file changes.
  bool running = true;
  while (running) {
    pollfd fds[2] = {{signal_fd, POLLIN, 0}, {watcher.fd(), POLLIN, 0}};
    if (poll(fds, watcher.fd() >= 0 ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      LogError("poll: ", strerror(errno));
      break;
    }
    if (fds[1].revents & POLLIN) watcher.OnReadable();
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo info;
      if (read(signal_fd, &info, sizeof(info)) != sizeof(info)) continue;
      if (info.ssi_signo == SIGHUP) {
        LogInfo("SIGHUP → reloading ", options.policy_path);
        watcher.Reload();
      } else {
        LogInfo(strsignal(info.ssi_signo),
                " → restoring everything and exiting");
        running = false;
      }
    }
  }

  sd_notify(0, "STOPPING=1");
  stop.Notify();
  loop_thread.join();
  collector.Stop();
  (*server)->Shutdown();
  hub.Close();
  absl::Status restored = executor.RestoreAll();
  close(signal_fd);
  if (!restored.ok()) {
    LogError("restore on exit: ", restored.message());
    return 1;
  }
  LogInfo("everything restored; bye");
  return 0;
}

}  // namespace locus
