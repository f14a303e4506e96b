// Which selected processes Locus may act on. A name is not enough: any local
// user can exec a binary called nginx and set its title to "nginx: worker
// process". A process is trusted when its executable is a root-owned file
// that no group or other user may write and its master (the topmost
// selected process above it, or itself) was started by root; or, whatever
// its binary, when it sits in the cgroup of the systemd unit the policy names
// (targets.systemd_unit) in the system's service manager, which only root
// can start things in: "/system.slice/nginx.service" (or under any other
// slice), sub-cgroups included; never a cgroup of that name below another
// unit, such as a user's own manager (user@1000.service), where the user
// names units as they please.
#ifndef LOCUS_AGENT_HOST_TARGET_TRUST_H_
#define LOCUS_AGENT_HOST_TARGET_TRUST_H_

#include <sys/stat.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "policy/snapshot.h"

namespace locus {

struct TargetTrust {
  // e.g. "nginx.service"; empty: no unit vouches for its processes.
  std::string systemd_unit;
};

// A process a selector matched that is not acted on, and why (for explain).
using RefusedTarget = RefusedProcess;  // as the snapshot carries it

// readlink <proc_dir>/exe, without the " (deleted)" of an upgraded binary;
// empty when unreadable.
std::string ExecutablePath(const std::string& proc_dir);

// Whether only root may change the file `st` describes: root's, written by
// no group or other. What a binary, pid file or socket directory Locus
// trusts must be.
inline bool OnlyRootMayWrite(const struct stat& st) {
  return st.st_uid == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// Why the executable of the process in `proc_dir` (stat of its exe link,
// which follows to the binary, even once deleted) is not one only root
// controls: owned by root, written by no group or other; "" when it is.
std::string ExecutableProblem(const std::string& proc_dir);

// Why the process whose /proc/PID/status is `status` does not run as root:
// its real and effective uids both 0 (a setuid-root binary started by a
// user has only the effective one); "" when it does. Pure.
std::string NotRootProblem(absl::string_view status);

// The checks for one scan: each master's uid is read once.
class TrustCheck {
 public:
  TrustCheck(std::string procfs_root, const TargetTrust& trust)
      : procfs_root_(std::move(procfs_root)), trust_(trust) {}

  // "" when process `pid` may be a target, else why not. `master`: its
  // topmost selected ancestor (`pid` itself when it has none).
  std::string WhyNot(int32_t pid, int32_t master);

 private:
  // "" when the process in `dir` is in the policy's unit of the system's
  // service manager (trust_.systemd_unit, not empty), else why not.
  std::string NotInUnit(const std::string& dir) const;
  const std::string& MasterProblem(int32_t master);

  std::string procfs_root_;
  const TargetTrust& trust_;
  std::map<int32_t, std::string> master_problems_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_HOST_TARGET_TRUST_H_
