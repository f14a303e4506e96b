#include "agent/config/policy_watcher.h"

#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/log.h"
#include "common/os_error.h"
#include "google/protobuf/util/message_differencer.h"
#include "policy/default_policy.h"
#include "policy/policy_yaml.h"

namespace locus {
namespace {

// Events on the file itself: finished writes, attribute changes (a
// ConfigMap's target), and the file going away or being renamed.
constexpr uint32_t kFileEvents =
    IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF;
// Events in the directory: a file renamed in or out, written, deleted, or
// created (only a symlink is complete when created).
constexpr uint32_t kDirectoryEvents = IN_CLOSE_WRITE | IN_MOVED_TO |
                                      IN_MOVED_FROM | IN_DELETE | IN_CREATE |
                                      IN_ATTRIB;

std::string DefaultSource(const std::string& path) {
  return absl::StrCat("built-in default (", path, " absent)");
}

// The default in force because the file at start could not be used: the
// source says why, never "absent" (a FIFO or a dangling link is there).
std::string RefusedSource(absl::string_view why) {
  return absl::StrCat("built-in default (", why, ")");
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string BasenameOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

PolicyWatcher::PolicyWatcher(PolicyWatcherOptions options)
    : options_(std::move(options)),
      directory_(DirectoryOf(options_.path)),
      basename_(BasenameOf(options_.path)) {
  state_.policy = std::make_shared<const v1::Policy>(DefaultPolicy());
  state_.source = DefaultSource(options_.path);
}

absl::Status PolicyWatcher::Start() {
  inotify_fd_.reset(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!inotify_fd_) return LastErrnoStatus("inotify_init1");
  // Without the directory, a file created later would go unnoticed.
  if (inotify_add_watch(inotify_fd_.get(), directory_.c_str(),
                        kDirectoryEvents) < 0) {
    LogWarning("policy: cannot watch ", directory_, " (", std::strerror(errno),
               "); changes apply on SIGHUP only");
  }
  Load(/*force=*/true);
  {
    std::lock_guard<std::mutex> lock(mu_);
    state_.version = 1;
    state_.loaded_unix_ns = absl::ToUnixNanos(absl::Now());
    if (!state_.last_error.empty()) {
      return absl::InvalidArgumentError(state_.last_error);
    }
    if (state_.is_default) LogInfo("policy: ", state_.source);
  }
  return absl::OkStatus();
}

void PolicyWatcher::WatchFile() {
  // Follows symlinks: the watch is on what the path names now. Watching the
  // same inode again returns the same descriptor.
  file_watch_ =
      inotify_add_watch(inotify_fd_.get(), options_.path.c_str(), kFileEvents);
}

bool PolicyWatcher::OnReadable() {
  if (!inotify_fd_) return false;
  alignas(struct inotify_event) char buffer[16 * 1024];
  bool relevant = false;
  while (true) {
    ssize_t n = read(inotify_fd_.get(), buffer, sizeof(buffer));
    if (n <= 0) break;  // EAGAIN: drained
    for (char* p = buffer; p < buffer + n;) {
      const auto* event = reinterpret_cast<const struct inotify_event*>(p);
      p += sizeof(struct inotify_event) + event->len;
      if (event->mask & IN_IGNORED) continue;
      if (event->len == 0) {  // on the file itself
        relevant = true;
        continue;
      }
      std::string name = event->name;
      if (event->mask & IN_CREATE) {
        // A new regular file is still being written: its IN_CLOSE_WRITE
        // follows. A symlink is complete.
        struct stat st;
        std::string full = absl::StrCat(directory_, "/", name);
        if (lstat(full.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) continue;
      }
      // Our file, or a ConfigMap's "..data" link it resolves through.
      if (name == basename_ || name.rfind("..", 0) == 0) relevant = true;
    }
  }
  return relevant ? Load(/*force=*/false) : false;
}

bool PolicyWatcher::Reload() { return Load(/*force=*/true); }

bool PolicyWatcher::Load(bool force) {
  // Never blocks and never reads more than the size limit, whatever is at
  // the path (a FIFO, a device, a huge file): this runs on the thread that
  // handles SIGTERM.
  absl::StatusOr<std::string> read = ReadPolicyFile(options_.path);
  const bool absent = absl::IsNotFound(read.status());
  std::optional<std::string> text;
  if (read.ok()) text = *std::move(read);
  if (inotify_fd_ && text.has_value()) WatchFile();
  if (!force && !last_failed_ && (read.ok() || absent) && text == last_text_) {
    return false;  // the same bytes (or the same absence) as last time
  }
  last_text_ = text;
  last_failed_ = !read.ok() && !absent;

  std::lock_guard<std::mutex> lock(mu_);
  if (last_failed_) {
    // Anything at the path but a readable policy (a directory, a FIFO, a
    // link to nothing, too big, unreadable) keeps the running policy: only
    // absence means the built-in default.
    state_.last_error = std::string(read.status().message());
    ++state_.reloads_rejected;
    if (state_.version == 0) {
      // At start there is no last good policy to keep: Start() returns the
      // error, and the caller says what it does about it.
      state_.source = RefusedSource(state_.last_error);
      return false;
    }
    LogError("policy: ", state_.last_error, "; keeping version ",
             state_.version, " (", state_.source, ")");
    return false;
  }
  if (!text.has_value()) {
    if (state_.is_default) return false;  // absent before, absent now
    state_.last_error =
        absl::StrCat(options_.path, ": removed; still running version ",
                     state_.version, " from ", state_.source);
    ++state_.reloads_rejected;
    LogWarning("policy: ", state_.last_error);
    return false;
  }
  return Apply(*text);
}

bool PolicyWatcher::Apply(const std::string& text) {
  absl::StatusOr<v1::Policy> parsed =
      ParsePolicyYaml(text, options_.path,
                      options_.host.has_value() ? &*options_.host : nullptr);
  if (!parsed.ok()) {
    state_.last_error = std::string(parsed.status().message());
    ++state_.reloads_rejected;
    if (state_.version == 0) {  // at start: Start() returns it (see Load)
      state_.source = RefusedSource(absl::StrCat(options_.path, " rejected"));
      return false;
    }
    LogError("policy: ", options_.path, " rejected, keeping version ",
             state_.version, " (", state_.source, "):\n", state_.last_error);
    return false;
  }
  state_.last_error.clear();
  bool was_default = state_.is_default;
  state_.is_default = false;
  state_.source = options_.path;
  if (!was_default && google::protobuf::util::MessageDifferencer::Equals(
                          *state_.policy, *parsed)) {
    return false;  // same policy, e.g. a comment changed
  }
  state_.policy = std::make_shared<const v1::Policy>(*std::move(parsed));
  if (state_.version > 0) {  // after Start, which stamps version 1 itself
    ++state_.version;
    ++state_.reloads_ok;
    state_.loaded_unix_ns = absl::ToUnixNanos(absl::Now());
  }
  LogInfo("policy: loaded ", options_.path, " (version ",
          std::max<uint64_t>(state_.version, 1), ")");
  return true;
}

PolicyState PolicyWatcher::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

std::shared_ptr<const v1::Policy> PolicyWatcher::policy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_.policy;
}

}  // namespace locus
