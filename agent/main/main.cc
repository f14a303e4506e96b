// locusd: the Locus NUMA tuning agent. Flags are parsed here and nowhere
// else; each mode lives in a library.
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "agent/core/mode.h"
#include "agent/daemon/check_policy.h"
#include "agent/daemon/daemon.h"
#include "agent/daemon/log_sinks.h"
#include "agent/daemon/restore_mode.h"
#include "agent/doctor/doctor_reader.h"
#include "agent/main/one_shot.h"
#include "agent/sensors/feature_probe.h"
#include "agent/sensors/sensor_source.h"
#include "common/defaults.h"
#include "locus_version.h"  // generated: agent/main/CMakeLists.txt

// Defaults are written once: paths in common/defaults.h, the rest in the
// options structs the flags fill in.

ABSL_FLAG(std::string, policy, locus::kDefaultPolicyPath,
          "Policy file (YAML). When absent, the built-in default (nginx) "
          "applies. Reloaded when it changes and on SIGHUP.");
ABSL_FLAG(std::string, socket, locus::kDefaultSocketPath,
          "Unix socket for locusctl and the metrics stream (mode 0660, group "
          "--socket_group).");
ABSL_FLAG(std::string, socket_group, locus::kDefaultSocketGroup,
          "Group of the socket; its members may use the commands that change "
          "state. If no such group exists the socket is root's alone (0600).");
ABSL_FLAG(std::string, listen_tcp, "",
          "Also serve the (read-only) API on TCP: PORT (127.0.0.1) or "
          "HOST:PORT. Empty: Unix socket only.");
ABSL_FLAG(std::string, metrics_listen, "",
          "Serve Prometheus metrics on http://ADDR:PORT/metrics: an IPv4 "
          "address or a bracketed IPv6 one, and a port, e.g. 127.0.0.1:9477, "
          "[::1]:9477, or [::]:9477 (every address, IPv4's too). Empty: no "
          "endpoint.");
ABSL_FLAG(std::string, metrics_textfile, "",
          "Rewrite this file with the Prometheus metrics after every tick, "
          "atomically, for node_exporter's textfile collector (e.g. "
          "/var/lib/prometheus/node-exporter/locus.prom). Its directory is "
          "opened once, at start, and no directory on the path may be a "
          "symlink. Empty: none.");
ABSL_FLAG(std::string, journal, locus::kDefaultJournalPath,
          "Undo journal: the original value of everything locusd changes, "
          "written before the change.");
ABSL_FLAG(locus::Mode, mode, locus::DaemonOptions{}.mode,
          "enforce or dry_run; overrides the policy's mode. Empty: the "
          "policy's.");
ABSL_FLAG(absl::Duration, tick, locus::DaemonOptions{}.tick,
          "Control loop period.");
ABSL_FLAG(int, page_movers, 0,
          "Threads moving pages, each taking one process at a time; 0: one "
          "per NUMA node, at least 2, at most 8. 1 moves one process at a "
          "time.");
ABSL_FLAG(bool, restore, false,
          "Restore everything the journal holds (after a crash), delete it, "
          "and exit.");
ABSL_FLAG(std::string, check_policy, "",
          "Validate this policy file, print every error with its "
          "file:line:column, and exit (0 when valid).");

ABSL_FLAG(bool, doctor, false,
          "Check whether Locus can help on this host and what stands in the "
          "way (capabilities, BTF, NUMA nodes, AutoNUMA, irqbalance, numad, "
          "the policy, the journal): one line per check with its fix, then "
          "exit (0 when nothing failed).");
ABSL_FLAG(bool, probe, false,
          "Probe the kernel's BPF features, print each sensor's chosen source "
          "and why better ones were rejected, then exit.");
ABSL_FLAG(double, observe, 0,
          "Run the sensors for this many seconds, print one snapshot as JSON "
          "(per task, per CPU softirq, per IRQ, sources, drops), then exit.");
ABSL_FLAG(bool, json, false, "With --probe: print JSON instead of text.");
ABSL_FLAG(std::string, disable_feature, "",
          "Comma-separated BPF features to treat as absent, so their fallbacks "
          "run: fentry,tp_btf,raw_tp,iter_task,task_storage.");
ABSL_FLAG(std::string, sysfs_root, locus::DaemonOptions{}.sysfs_root,
          "Root of sysfs (topology is read from here).");
ABSL_FLAG(std::string, procfs_root, locus::DaemonOptions{}.procfs_root,
          "Root of procfs (numa_balancing, /proc/PID/task/TID/sched).");
ABSL_FLAG(uint32_t, softirq_sample_every,
          locus::SensorOptions{}.softirq_sample_every,
          "Time one softirq in N of those the hooks see per CPU (rounded up "
          "to a power of two) and charge it, scaled, to the interrupted task; "
          "counts stay exact. With the hooks tracing a tenth of the time "
          "(--softirq_window), 8 times one softirq in about 80.");
ABSL_FLAG(absl::Duration, softirq_window, absl::Milliseconds(25),
          "Trace with the softirq entry/exit hooks only this long in every "
          "--softirq_window_every: they fire on every packet batch. The "
          "programs stay attached and return at once outside the windows "
          "(attaching at each window would patch kernel text, interrupting "
          "every CPU). Counts stay exact (from /proc/softirqs); time and "
          "per-task charges are scaled from the events seen. 0: tracing all "
          "the time.");
ABSL_FLAG(absl::Duration, softirq_window_every, absl::Milliseconds(250),
          "Period of --softirq_window. The daemon shortens a period longer "
          "than its --tick to the tick, keeping the share of time tracing, "
          "so that every tick sees some softirqs.");
ABSL_FLAG(uint32_t, switch_sample_every,
          locus::SensorOptions{}.switch_sample_every,
          "Time one context switch in N per CPU for per-CPU busy time (power "
          "of two; 1 = every switch); counts stay exact.");
ABSL_FLAG(uint32_t, hardirq_sample_every,
          locus::SensorOptions{}.hardirq_sample_every,
          "Sample one hardirq in N per CPU (power of two) for per-IRQ time "
          "and counts, both estimates (exact with 1; /proc/interrupts has "
          "the kernel's exact counts).");
ABSL_FLAG(uint32_t, sensor_max_tasks, locus::SensorOptions{}.max_tasks,
          "Entries of the sensors' per-thread BPF maps (raw_tp and fentry "
          "sources): beyond that the least recently seen threads are evicted "
          "and counted as drops. A size the kernel refuses leaves the agent "
          "on /proc and /sys.");
ABSL_FLAG(std::string, log_format, "text",
          "text: lines on stderr, or structured journald entries (MESSAGE_ID, "
          "LOCUS_* fields) when stderr is the journal; json: one JSON object "
          "per line on stderr (containers).");
ABSL_FLAG(int, v, 0,
          "Log verbosity: 0 info and up, 1 the agent's debug lines, 2 also "
          "libbpf's. Changeable while running: locusctl log-level N.");

namespace {

// --help: the usage message and the flags defined in this file (absl's
// own --help would list every library's flags and exit 1).
void PrintHelp() {
  std::vector<const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (absl::EndsWith(flag->Filename(), "agent/main/main.cc")) {
      flags.push_back(flag);
    }
  }
  std::sort(flags.begin(), flags.end(),
            [](const auto* a, const auto* b) { return a->Name() < b->Name(); });
  std::cout << "locusd: " << absl::ProgramUsageMessage() << "\n\nFlags:\n";
  for (const absl::CommandLineFlag* flag : flags) {
    std::cout << "  --" << flag->Name() << "  (default: \""
              << flag->DefaultValue() << "\")\n      " << flag->Help() << "\n";
  }
}

// Parses the command line with absl's public API; true when it asked for
// --help or --version (printed: asking is not a failure, exit 0).
bool ParseFlagsOrHelp(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "the Locus NUMA tuning agent.\n\n"
      "  locusd [--policy=PATH] [--socket=PATH] [--journal=PATH] "
      "[--mode=enforce|dry_run] [--tick=1s]\n"
      "         [--metrics_listen=ADDR:PORT] [--metrics_textfile=PATH]\n"
      "  locusd --probe [--json] [--disable_feature=NAME,...]\n"
      "  locusd --observe=SECONDS --json [--disable_feature=NAME,...]\n"
      "  locusd --restore [--journal=PATH]\n"
      "  locusd --check_policy=PATH\n"
      "  locusd --doctor [--policy=PATH] [--journal=PATH]\n"
      "  locusd --version\n\n"
      "The daemon needs CAP_BPF, CAP_PERFMON, CAP_SYS_NICE and "
      "CAP_SYS_PTRACE; --probe and --observe need CAP_BPF and CAP_PERFMON "
      "(run as root).");
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "--help" || arg == "-help" || arg == "--helpfull" ||
        arg == "--helpshort" || arg == "-h") {
      PrintHelp();
      return true;
    }
    if (arg == "--version" || arg == "-version") {
      std::cout << "locusd " << LOCUS_VERSION_STRING << "\n";
      return true;
    }
  }
  absl::ParseCommandLine(argc, argv);
  return false;
}

// What every mode reads: the roots, the sensors' knobs, the features forced
// off. An error names the flag that is wrong.
absl::StatusOr<locus::OneShotOptions> CommonOptions() {
  locus::OneShotOptions options;
  options.sysfs_root = absl::GetFlag(FLAGS_sysfs_root);
  options.procfs_root = absl::GetFlag(FLAGS_procfs_root);
  options.json = absl::GetFlag(FLAGS_json);
  options.observe_seconds = absl::GetFlag(FLAGS_observe);
  locus::SensorOptions& sensors = options.sensors;
  sensors.softirq_sample_every = absl::GetFlag(FLAGS_softirq_sample_every);
  sensors.hardirq_sample_every = absl::GetFlag(FLAGS_hardirq_sample_every);
  sensors.switch_sample_every = absl::GetFlag(FLAGS_switch_sample_every);
  absl::Duration window = absl::GetFlag(FLAGS_softirq_window);
  absl::Duration window_every = absl::GetFlag(FLAGS_softirq_window_every);
  if (window < absl::ZeroDuration() ||
      (window > absl::ZeroDuration() && window >= window_every)) {
    return absl::InvalidArgumentError(
        "--softirq_window must be 0 or shorter than --softirq_window_every");
  }
  sensors.softirq_window_ns = absl::ToInt64Nanoseconds(window);
  sensors.softirq_window_every_ns = absl::ToInt64Nanoseconds(window_every);
  sensors.max_tasks = absl::GetFlag(FLAGS_sensor_max_tasks);
  if (sensors.max_tasks == 0) {
    return absl::InvalidArgumentError("--sensor_max_tasks must be at least 1");
  }
  auto disabled = locus::ParseFeatureList(absl::GetFlag(FLAGS_disable_feature));
  if (!disabled.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--disable_feature: ", disabled.status().message()));
  }
  options.disabled_features = *disabled;
  return options;
}

absl::StatusOr<locus::DaemonOptions> DaemonOptionsFrom(
    const locus::OneShotOptions& common) {
  locus::DaemonOptions daemon;
  daemon.policy_path = absl::GetFlag(FLAGS_policy);
  daemon.socket_path = absl::GetFlag(FLAGS_socket);
  daemon.socket_group = absl::GetFlag(FLAGS_socket_group);
  daemon.tcp_address = absl::GetFlag(FLAGS_listen_tcp);
  daemon.journal_path = absl::GetFlag(FLAGS_journal);
  daemon.metrics_export.listen = absl::GetFlag(FLAGS_metrics_listen);
  daemon.metrics_export.textfile = absl::GetFlag(FLAGS_metrics_textfile);
  if (!daemon.metrics_export.listen.empty()) {
    if (absl::Status address =
            locus::CheckListenAddress(daemon.metrics_export.listen);
        !address.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--metrics_listen: ", address.message()));
    }
  }
  daemon.mode = absl::GetFlag(FLAGS_mode);
  daemon.tick = absl::GetFlag(FLAGS_tick);
  if (daemon.tick < absl::Milliseconds(10) || daemon.tick > absl::Minutes(10)) {
    return absl::InvalidArgumentError("--tick must be between 10ms and 10m");
  }
  daemon.page_movers = absl::GetFlag(FLAGS_page_movers);
  if (daemon.page_movers < 0 || daemon.page_movers > 64) {
    return absl::InvalidArgumentError("--page_movers must be between 0 and 64");
  }
  daemon.sysfs_root = common.sysfs_root;
  daemon.procfs_root = common.procfs_root;
  daemon.disabled_features = common.disabled_features;
  daemon.sensors = common.sensors;
  daemon.version = LOCUS_VERSION_STRING;
  // Every tick sees some softirqs: a window period longer than the tick is
  // shortened to it, keeping the share of time attached.
  absl::Duration window = absl::GetFlag(FLAGS_softirq_window);
  absl::Duration window_every = absl::GetFlag(FLAGS_softirq_window_every);
  if (window > absl::ZeroDuration() && window_every > daemon.tick) {
    daemon.sensors.softirq_window_ns = absl::ToInt64Nanoseconds(
        window * absl::FDivDuration(daemon.tick, window_every));
    daemon.sensors.softirq_window_every_ns =
        absl::ToInt64Nanoseconds(daemon.tick);
  }
  return daemon;
}

// The log's sink and verbosity, before anything logs. The sink is never
// destroyed: threads may log until the process ends.
absl::Status SetUpLogging() {
  absl::StatusOr<locus::LogFormat> format =
      locus::ParseLogFormat(absl::GetFlag(FLAGS_log_format));
  if (!format.ok()) return format.status();
  if (absl::GetFlag(FLAGS_v) < 0) {
    return absl::InvalidArgumentError("--v must be 0 or more");
  }
  locus::SetLogVerbosity(absl::GetFlag(FLAGS_v));
  locus::SetLogSink(locus::MakeLogSink(*format, "locusd").release());
  return absl::OkStatus();
}

// A flag that is wrong: exit code 2, the reason on stderr.
int BadFlag(const absl::Status& status) {
  std::cerr << "locusd: " << status.message() << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // A log reader gone (a closed pipe, journald restarted) must never end
  // locusd, least of all mid-restore: a failed write is just lost.
  signal(SIGPIPE, SIG_IGN);
  if (ParseFlagsOrHelp(argc, argv)) return 0;
  if (absl::Status logging = SetUpLogging(); !logging.ok()) {
    return BadFlag(logging);
  }
  absl::StatusOr<locus::OneShotOptions> options = CommonOptions();
  if (!options.ok()) return BadFlag(options.status());
  if (absl::GetFlag(FLAGS_doctor)) {
    return locus::RunDoctor({.sysfs_root = options->sysfs_root,
                             .procfs_root = options->procfs_root,
                             .policy_path = absl::GetFlag(FLAGS_policy),
                             .journal_path = absl::GetFlag(FLAGS_journal),
                             .disabled_features = options->disabled_features},
                            std::cout);
  }
  if (absl::GetFlag(FLAGS_probe)) {
    return locus::RunProbe(*options, std::cout, std::cerr);
  }
  if (options->observe_seconds > 0) {
    return locus::RunObserve(*options, std::cout, std::cerr);
  }
  if (absl::GetFlag(FLAGS_restore)) {
    return locus::RunRestore(absl::GetFlag(FLAGS_journal), options->sysfs_root,
                             options->procfs_root);
  }
  if (std::string path = absl::GetFlag(FLAGS_check_policy); !path.empty()) {
    return locus::RunCheckPolicy(path, options->sysfs_root);
  }
  absl::StatusOr<locus::DaemonOptions> daemon = DaemonOptionsFrom(*options);
  if (!daemon.ok()) return BadFlag(daemon.status());
  return locus::RunDaemon(*daemon);
}
