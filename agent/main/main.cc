// locusd: the Locus NUMA tuning agent. Flags are parsed here and nowhere
// else; each mode lives in a library.
#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "agent/bpf/feature_probe.h"
#include "agent/main/one_shot.h"

ABSL_FLAG(bool, probe, false,
          "Probe the kernel's BPF features, print each sensor's chosen source "
          "and why better ones were rejected, then exit.");
ABSL_FLAG(double, observe, 0,
          "Run the sensors for this many seconds, print one snapshot as JSON "
          "(per task, per CPU softirq, per IRQ, sources, drops), then exit.");
ABSL_FLAG(bool, json, false, "With --probe: print JSON instead of text.");
ABSL_FLAG(std::string, disable_feature, "",
          "Comma-separated BPF features to treat as absent, so their fallbacks "
          "run: fentry,tp_btf,raw_tp,iter_task,task_storage,ringbuf.");
ABSL_FLAG(std::string, sysfs_root, "/sys",
          "Root of sysfs (topology is read from here).");
ABSL_FLAG(std::string, procfs_root, "/proc",
          "Root of procfs (numa_balancing, /proc/PID/task/TID/sched).");
ABSL_FLAG(uint32_t, softirq_sample_every, 64,
          "Time one softirq in N per CPU (rounded up to a power of two) and "
          "charge it, scaled by N, to the interrupted task; counts stay "
          "exact.");
ABSL_FLAG(uint32_t, switch_sample_every, 1,
          "Time one context switch in N per CPU for per-CPU busy time (power "
          "of two; 1 = every switch); counts stay exact.");
ABSL_FLAG(uint32_t, hardirq_sample_every, 64,
          "Time one hardirq in N per CPU (power of two); counts stay exact.");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "the Locus NUMA tuning agent.\n\n"
      "  locusd --probe [--json] [--disable_feature=NAME,...]\n"
      "  locusd --observe=SECONDS --json [--disable_feature=NAME,...]\n\n"
      "Both need CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN (run as root).");
  // --help lists the flags defined in this file (absl matches on the file
  // name, which "main.cc" does not satisfy by default).
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view path) {
    return absl::EndsWith(path, "agent/main/main.cc");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
  absl::ParseCommandLine(argc, argv);

  locus::OneShotOptions options;
  options.sysfs_root = absl::GetFlag(FLAGS_sysfs_root);
  options.procfs_root = absl::GetFlag(FLAGS_procfs_root);
  options.json = absl::GetFlag(FLAGS_json);
  options.observe_seconds = absl::GetFlag(FLAGS_observe);
  options.softirq_sample_every = absl::GetFlag(FLAGS_softirq_sample_every);
  options.hardirq_sample_every = absl::GetFlag(FLAGS_hardirq_sample_every);
  options.switch_sample_every = absl::GetFlag(FLAGS_switch_sample_every);
  auto disabled = locus::ParseFeatureList(absl::GetFlag(FLAGS_disable_feature));
  if (!disabled.ok()) {
    std::cerr << "locusd: --disable_feature: " << disabled.status().message()
              << "\n";
    return 2;
  }
  options.disabled_features = *disabled;

  if (absl::GetFlag(FLAGS_probe)) {
    return locus::RunProbe(options, std::cout, std::cerr);
  }
  if (options.observe_seconds > 0) {
    return locus::RunObserve(options, std::cout, std::cerr);
  }
  std::cerr << "locusd: nothing to do yet: use --probe or --observe=SECONDS "
               "(see --help)\n";
  return 2;
}
