// locusd as a long-running daemon: everything but flag parsing.
#ifndef LOCUS_AGENT_DAEMON_DAEMON_H_
#define LOCUS_AGENT_DAEMON_DAEMON_H_

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "agent/api/metrics_export.h"
#include "agent/core/mode.h"
#include "agent/daemon/host_identity.h"
#include "agent/daemon/instance_lock.h"
#include "agent/sensors/feature_probe.h"
#include "agent/sensors/sensor_source.h"
#include "common/defaults.h"
#include "common/unique_fd.h"

namespace locus {

struct DaemonOptions {
  std::string policy_path = kDefaultPolicyPath;
  std::string socket_path = kDefaultSocketPath;
  std::string socket_group = kDefaultSocketGroup;
  std::string tcp_address;  // empty: Unix socket only
  std::string journal_path = kDefaultJournalPath;
  // Overrides the policy's mode; MODE_UNSPECIFIED keeps it.
  Mode mode = v1::Policy::MODE_UNSPECIFIED;
  absl::Duration tick = absl::Seconds(1);
  // Threads moving pages; 0: one per NUMA node, 2 to 8 (DefaultPageMovers).
  int page_movers = 0;
  std::string sysfs_root = kDefaultSysfsRoot;
  std::string procfs_root = kDefaultProcfsRoot;
  std::set<Feature> disabled_features;
  // Sampling knobs; the roots and topology are filled in from the host.
  SensorOptions sensors;
  // What status and the log say: "0.1.0 (build 1a2b3c4d5e6f)".
  std::string version;
  // Prometheus: /metrics endpoint and textfile, both off by default.
  MetricsExportOptions metrics_export;
};

class ActuatorExecutor;
class AgentServer;
class DaemonController;
class ExperimentRunner;
class WorkCounter;
struct ControllerHooks;
class Loop;
class MetricsHub;
class PolicySource;
class PolicyWatcher;
class SnapshotCollector;
class ThreadOps;
class TickPublisher;
class Watchdog;
struct TargetScanOptions;
struct Topology;
namespace v1 {
class ProbeReport;
}

class Daemon {
 public:
  explicit Daemon(DaemonOptions options);
  ~Daemon();  // Stop()
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Checks its capabilities, takes the journal (restoring what a crashed run
  // left), loads the policy, opens the sensors, the journal and the socket,
  // and starts the loop. The error's message is the line to log: the
  // daemon cannot start (missing capability, invalid policy file, socket in
  // use, another daemon on the journal, a journal left by a crash that
  // cannot be restored).
  absl::Status Start();

  // After Start: waits for SIGTERM or SIGINT (SIGHUP, or a change to the
  // policy file, reloads the policy), then stops. Returns the process exit
  // code: 0 when everything was restored.
  int Serve();

  // Stops the loop, the scans and the server, and restores everything the
  // daemon changed. Does nothing when not running.
  absl::Status Stop();

 private:
  absl::Status CheckWatchdog();
  absl::Status TakeOverJournal();
  absl::Status StartPolicyWatcher(const Topology& topology);
  void OpenSensors(const Topology& topology);
  TargetScanOptions ScanOptions() const;
  void MakeCollector();
  absl::Status MakeExecutor(int nodes);  // NUMA nodes: page movers
  void MakeLoop();
  void MakeExperiment(ControllerHooks& hooks);
  absl::Status StartServer();
  void Run();
  void WaitForStopSignal();
  bool OnSignal();  // false when the signal asks the daemon to stop

  const DaemonOptions options_;
  UniqueFd signal_fd_;
  std::optional<InstanceLock> lock_;
  std::unique_ptr<PolicyWatcher> watcher_;
  std::unique_ptr<PolicySource> policy_source_;
  std::unique_ptr<v1::ProbeReport> probe_;
  std::unique_ptr<SensorSource> sensors_;
  std::unique_ptr<ThreadOps> scan_threads_;
  std::unique_ptr<SnapshotCollector> collector_;
  std::unique_ptr<ActuatorExecutor> executor_;
  HostIdentity identity_;  // read once, in MakeLoop
  std::unique_ptr<MetricsHub> hub_;
  std::unique_ptr<TickPublisher> publisher_;
  std::unique_ptr<WorkCounter> work_counter_;
  std::unique_ptr<ExperimentRunner> experiment_;
  std::unique_ptr<Loop> loop_;
  std::unique_ptr<DaemonController> controller_;
  std::unique_ptr<AgentServer> server_;
  std::unique_ptr<MetricsExport> metrics_export_;  // null when off
  std::unique_ptr<Watchdog> watchdog_;             // null without WatchdogSec=
  absl::Notification stop_loop_;
  std::thread loop_thread_;
  bool running_ = false;
};

// Start, then Serve: the process exit code, 1 when the daemon cannot start
// (the reason is logged).
int RunDaemon(const DaemonOptions& options);

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_DAEMON_H_
