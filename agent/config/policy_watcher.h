// Keeps the running policy in step with the policy file. The file is watched
// with inotify on the file itself (edits in place) and on its directory
// (editors that write a temporary file and rename it over, `ln -sf`, and
// Kubernetes ConfigMaps, whose files are symlinks through a "..data" link
// swapped by rename). SIGHUP is the caller's: call Reload() from the loop once
// the signal was seen (never from the signal handler).
//
// A file that fails to load never replaces the running policy: the last good
// one stays, and the error, with its file:line:column, is kept for status and
// metrics until a good file arrives. An absent file means the built-in
// default at start; a file removed later leaves the running policy in place
// (editors remove and recreate files; a momentary gap must not reset tuning).
// Anything else at the path (a directory, a FIFO, a device, a symbolic link
// that names nothing, a file over kMaxPolicyBytes) is an error like a bad
// file, never "removed": refused without blocking or reading it whole, and
// the last good policy stays.
#ifndef LOCUS_AGENT_CONFIG_POLICY_WATCHER_H_
#define LOCUS_AGENT_CONFIG_POLICY_WATCHER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "common/defaults.h"
#include "common/unique_fd.h"
#include "locus/v1/policy.pb.h"
#include "policy/policy_state.h"
#include "policy/snapshot.h"

namespace locus {

struct PolicyWatcherOptions {
  std::string path = kDefaultPolicyPath;
  // When set, CPU lists in the file must name CPUs of this host.
  std::optional<Topology> host;
};

class PolicyWatcher {
 public:
  explicit PolicyWatcher(PolicyWatcherOptions options);
  PolicyWatcher(const PolicyWatcher&) = delete;
  PolicyWatcher& operator=(const PolicyWatcher&) = delete;

  // Loads the file and starts watching. A missing file gives the built-in
  // default (OK). Anything else that cannot be used (an invalid file, with
  // every error up to kMaxReportedErrors; not a regular file; a symbolic
  // link that names nothing; too big; unreadable) gives InvalidArgument
  // saying why, and logs nothing (the caller says what it does); the
  // built-in default is then what policy() returns, with a source saying
  // why (never "absent"), and a daemon should refuse to start. Fails
  // otherwise only when inotify cannot be set up.
  absl::Status Start();

  // Readable (poll/epoll) when the file or its directory changed; then call
  // OnReadable(). -1 before Start().
  int fd() const { return inotify_fd_.get(); }

  // Drains pending change events and reloads if the file's content changed.
  // Returns true when the running policy changed.
  bool OnReadable();

  // Re-reads the file now, even if unchanged (SIGHUP). Returns true when the
  // running policy changed.
  bool Reload();

  PolicyState state() const;
  std::shared_ptr<const v1::Policy> policy() const;

 private:
  // Reads the file; `force` parses it even if its bytes did not change.
  bool Load(bool force);
  // Parses `text` and, if good, puts it in force. Called with mu_ held.
  bool Apply(const std::string& text);
  void WatchFile();

  const PolicyWatcherOptions options_;
  std::string directory_;
  std::string basename_;
  UniqueFd inotify_fd_;
  int file_watch_ = -1;
  // The bytes last read (successfully or not) and whether the file existed,
  // so that events that change nothing do nothing.
  std::optional<std::string> last_text_;
  // The last read failed (not a regular file, too big, unreadable): the
  // next read is judged afresh even if it finds the bytes of last_text_.
  bool last_failed_ = false;

  mutable std::mutex mu_;
  PolicyState state_;  // guarded by mu_
};

}  // namespace locus

#endif  // LOCUS_AGENT_CONFIG_POLICY_WATCHER_H_
