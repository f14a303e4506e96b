// Which host, and which boot of it, an agent runs on: the status and every
// Metrics message carry both, so that a collector reading many agents'
// streams can tell them apart (and a reboot from a restart). Read once at
// start: neither changes while the process lives (a hostname changed later
// is a rename the operator made, not a different machine).
#ifndef LOCUS_AGENT_DAEMON_HOST_IDENTITY_H_
#define LOCUS_AGENT_DAEMON_HOST_IDENTITY_H_

#include <string>

namespace locus {

struct HostIdentity {
  std::string hostname;  // gethostname(2)
  std::string boot_id;   // /proc/sys/kernel/random/boot_id, a UUID
};

// Empty fields for what cannot be read (logged once, not fatal: only the
// collector's labels are the poorer).
HostIdentity ReadHostIdentity(const std::string& procfs_root);

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_HOST_IDENTITY_H_
