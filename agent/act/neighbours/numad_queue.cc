#include "agent/act/neighbours/numad_queue.h"

#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/act/neighbours/process_finder.h"
#include "agent/host/file_util.h"
#include "agent/host/target_trust.h"
#include "common/os_error.h"
#include "common/printable.h"
#include "common/status_macros.h"

namespace locus {
namespace {

// numad.c's msg_t: the type is the receiver's pid; the body's text is
// unused by 'x' and 'r' and sent empty (its terminating zero only).
constexpr size_t kNumadTextBytes = 96;
struct NumadMessage {
  long type;
  long src_pid;
  long command;
  long arg1;
  long arg2;
  char text[kNumadTextBytes];
};
constexpr size_t kNumadBodyBytes = 4 * sizeof(long) + 1;
constexpr absl::Duration kNumadScanInterval = absl::Seconds(10);

std::string Who(int32_t pid) { return absl::StrCat("numad (pid ", pid, ")"); }

class QueueOps : public NumadOps {
 public:
  QueueOps(std::string procfs_root, std::string pid_file)
      : procfs_root_(std::move(procfs_root)),
        pid_file_(std::move(pid_file)),
        checker_(procfs_root_, "numad") {}

  absl::StatusOr<std::optional<NumadInstance>> Find() override {
    ASSIGN_OR_RETURN(std::optional<int32_t> pid, FindPid());
    if (!pid.has_value()) return std::optional<NumadInstance>();
    RETURN_IF_ERROR(CheckQueue(*pid).status());
    return std::optional<NumadInstance>(NumadInstance{*pid});
  }

  absl::Status Send(const NumadInstance& numad, char command,
                    int32_t pid) override {
    if (pid <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("pid ", pid, " cannot be handed to numad"));
    }
    ASSIGN_OR_RETURN(int queue, CheckQueue(numad.pid));
    NumadMessage message{};
    message.type = numad.pid;
    message.src_pid = getpid();
    message.command = command;
    message.arg1 = pid;
    if (msgsnd(queue, &message, kNumadBodyBytes, IPC_NOWAIT) != 0) {
      if (errno == EAGAIN) {
        return absl::UnavailableError(absl::StrCat(
            Who(numad.pid), "'s queue is full: it is not reading it; '",
            std::string(1, command), " ", pid, "' sent again later"));
      }
      return LastErrnoStatus(absl::StrCat(Who(numad.pid), ": msgsnd '",
                                          std::string(1, command), " ", pid,
                                          "'"));
    }
    return absl::OkStatus();
  }

  bool ProcessExists(int32_t pid) override {
    const std::string path = JoinPath(procfs_root_, absl::StrCat("/", pid));
    return access(path.c_str(), F_OK) == 0;
  }

  std::vector<std::string> LookAlikes() const override {
    std::vector<std::string> all = scan_refused_;
    if (!file_refused_.empty()) all.insert(all.begin(), file_refused_);
    return all;
  }

 private:
  absl::StatusOr<std::optional<int32_t>> FindPid();
  std::optional<int32_t> PidFromFile();
  absl::StatusOr<int> CheckQueue(int32_t numad_pid) const;

  std::string procfs_root_;
  std::string pid_file_;
  DaemonChecker checker_;    // the pid file's and the last scan's, each Find
  int32_t scanned_pid_ = 0;  // found by a scan, without a pid file
  absl::Time next_scan_ = absl::InfinitePast();
  std::string file_refused_;               // this Find's
  std::vector<std::string> scan_refused_;  // the last scan's
};

// The pid file names the daemon (a `numad -x` client runs under the same
// name for a moment) when root wrote it and no one else may; without one,
// the single root numad in /proc (process_finder.h), looked for every
// kNumadScanInterval only: a scan reads every process's stat.
absl::StatusOr<std::optional<int32_t>> QueueOps::FindPid() {
  std::optional<int32_t> named = PidFromFile();
  if (named.has_value() && checker_.IsDaemon(*named)) {
    return named;
  }
  if (scanned_pid_ > 0 && checker_.IsDaemon(scanned_pid_)) {
    return std::optional<int32_t>(scanned_pid_);
  }
  scanned_pid_ = 0;
  const absl::Time now = absl::Now();
  if (now < next_scan_) return std::optional<int32_t>();
  next_scan_ = now + kNumadScanInterval;
  ASSIGN_OR_RETURN(DaemonSearch found, FindDaemons(procfs_root_, "numad"));
  scan_refused_ = std::move(found.refused);
  if (found.genuine.empty()) return std::optional<int32_t>();
  if (found.genuine.size() > 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        found.genuine.size(), " numad processes run as root (pids ",
        absl::StrJoin(found.genuine, ", "), ") and ", pid_file_,
        " names none of them; Locus cannot tell which one moves processes: "
        "stop all but one"));
  }
  scanned_pid_ = found.genuine[0];
  return std::optional<int32_t>(scanned_pid_);
}

// The pid in the pid file, when it is a regular file of root's that no
// group or other may write: a user could otherwise name their own numad.
std::optional<int32_t> QueueOps::PidFromFile() {
  file_refused_.clear();
  struct stat st;
  if (lstat(pid_file_.c_str(), &st) != 0) return std::nullopt;
  if (!S_ISREG(st.st_mode) || !OnlyRootMayWrite(st)) {
    file_refused_ = Printable(absl::StrCat(
        "the pid file ", pid_file_, " is not a file only root may write (uid ",
        st.st_uid, ", mode ", absl::StrFormat("%04o", st.st_mode & 07777),
        "); refused: the pid it names is not taken for numad's"));
    return std::nullopt;
  }
  absl::StatusOr<std::string> text = ReadTextFile(pid_file_, 64);
  int32_t pid = 0;
  if (!text.ok() ||
      !absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &pid) || pid <= 0) {
    return std::nullopt;
  }
  return pid;
}

absl::StatusOr<int> QueueOps::CheckQueue(int32_t numad_pid) const {
  const int queue = msgget(kNumadQueueKey, 0);
  if (queue < 0) {
    return LastErrnoStatus(
        absl::StrCat(Who(numad_pid),
                     ": its message queue (key 0xdeadbeef) cannot be "
                     "opened; restart numad, or set coexist.numad: off"));
  }
  msqid_ds info{};
  if (msgctl(queue, IPC_STAT, &info) != 0) {
    return LastErrnoStatus(absl::StrCat(Who(numad_pid), ": its message queue"));
  }
  const bool others_write = (info.msg_perm.mode & 0002) != 0;
  if (info.msg_perm.uid != 0 || info.msg_perm.cuid != 0 || others_write) {
    return absl::FailedPreconditionError(absl::StrCat(
        "numad's message queue (key 0xdeadbeef) was created by uid ",
        info.msg_perm.cuid, ", is owned by uid ", info.msg_perm.uid, ", mode ",
        absl::StrFormat("%04o", info.msg_perm.mode & 0777),
        ": not root's alone, so a user could read what Locus sends or answer "
        "in numad's place; nothing sent. Remove it (ipcrm -Q 0xdeadbeef) and "
        "restart numad, or set coexist.numad: off"));
  }
  return queue;
}

}  // namespace

std::unique_ptr<NumadOps> MakeNumadQueueOps(std::string procfs_root,
                                            std::string pid_file) {
  return std::make_unique<QueueOps>(std::move(procfs_root),
                                    std::move(pid_file));
}

}  // namespace locus
