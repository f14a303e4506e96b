// Finding a neighbour daemon in /proc: irqbalance and numad both run as
// one process named after themselves. A name is no proof (any user can
// start a process called irqbalance), so a daemon is a process of that
// name that only root could have started: real and effective uid 0,
// running a root-owned binary no group or other may write. Any other
// process of that name is a look-alike: never counted, never messaged,
// never journaled under; only named, so that the doctor and the status can
// say it was refused.
#ifndef LOCUS_AGENT_ACT_NEIGHBOURS_PROCESS_FINDER_H_
#define LOCUS_AGENT_ACT_NEIGHBOURS_PROCESS_FINDER_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace locus {

// Whether `pid` runs with command name `comm` and is not a zombie (whose
// sockets and queues are gone already). Says nothing of who runs it.
bool RunsAs(const std::string& procfs_root, int32_t pid,
            absl::string_view comm);

// What process `pid` is to a search for the daemon `comm`.
struct Identity {
  bool named = false;    // RunsAs `comm`
  bool genuine = false;  // and is root's, as above
  // When named but not genuine: "a process named irqbalance (pid 9, uid
  // 65534) is not root's: ...; refused", printable.
  std::string refused;
};
Identity Identify(const std::string& procfs_root, int32_t pid,
                  absl::string_view comm);

// Whether `pid` is the daemon `comm` (Identify's genuine).
bool IsDaemon(const std::string& procfs_root, int32_t pid,
              absl::string_view comm);

// Identify for the checks of the same daemon again and again (the one
// found last, at every tick): each verdict is kept per (pid, start time,
// /proc/PID/stat field 22). A process keeps both for its life and a pid
// taken by another process comes with a new start time, so an unchanged
// process's status and binary are not read again; its stat is, each time
// (its name and state may change). A verdict reached without its status
// (unreadable) is not kept. What the key cannot see, a root process that
// changes its own uid or execs another binary of the same name, only root
// could do.
class DaemonChecker {
 public:
  DaemonChecker(std::string procfs_root, std::string comm)
      : procfs_root_(std::move(procfs_root)), comm_(std::move(comm)) {}

  Identity Identify(int32_t pid);
  bool IsDaemon(int32_t pid) { return Identify(pid).genuine; }

 private:
  struct Verdict {
    uint64_t start_time = 0;
    Identity identity;
  };
  std::string procfs_root_;
  std::string comm_;
  std::map<int32_t, Verdict> verdicts_;  // by pid; a few pids are checked
};

// Every process named `comm`, by what it is.
struct DaemonSearch {
  std::vector<int32_t> genuine;      // in /proc's order
  std::vector<std::string> refused;  // Identity::refused, one a look-alike
};
// An error when /proc cannot be listed.
absl::StatusOr<DaemonSearch> FindDaemons(const std::string& procfs_root,
                                         absl::string_view comm);

// Every pid that RunsAs `comm`, whoever runs it, in /proc's order: for a
// tuner only watched (tuned), never spoken to; an error when /proc cannot
// be listed.
absl::StatusOr<std::vector<int32_t>> FindProcessesNamed(
    const std::string& procfs_root, absl::string_view comm);

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_NEIGHBOURS_PROCESS_FINDER_H_
