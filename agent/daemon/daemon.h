// locusd as a long-running daemon: everything but flag parsing.
#ifndef LOCUS_AGENT_DAEMON_DAEMON_H_
#define LOCUS_AGENT_DAEMON_DAEMON_H_

#include <cstdint>
#include <set>
#include <string>

#include "absl/time/time.h"
#include "agent/sensors/feature_probe.h"
#include "agent/sensors/sensor_source.h"

namespace locus {

struct DaemonOptions {
  std::string policy_path = "/etc/locus/policy.yaml";
  std::string socket_path = "/run/locus/locusd.sock";
  std::string socket_group = "locus";
  std::string tcp_address;  // empty: Unix socket only
  std::string journal_path = "/var/lib/locus/journal";
  // "enforce" or "dry_run" overrides the policy's mode; empty keeps it.
  std::string mode;
  absl::Duration tick = absl::Seconds(1);
  std::string sysfs_root = "/sys";
  std::string procfs_root = "/proc";
  std::set<Feature> disabled_features;
  // Sampling knobs; the roots and topology are filled in from the host.
  SensorOptions sensors;
};

// Runs until SIGTERM or SIGINT, then restores everything it changed.
// Returns the process exit code: 0 after a clean stop, 1 when it cannot
// start (missing capability, invalid policy file, socket in use, journal
// left by a crash that cannot be restored).
int RunDaemon(const DaemonOptions& options);

// `locusd --restore`: restores what a journal holds and deletes it. 0 when
// there was nothing to do or everything was restored.
int RunRestore(const std::string& journal_path, const std::string& sysfs_root,
               const std::string& procfs_root);

// `locusd --check_policy=FILE`: 0 when valid, 1 printing every error.
int RunCheckPolicy(const std::string& path, const std::string& sysfs_root);

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_DAEMON_H_
