#include "agent/act/neighbours/irqbalance_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "agent/act/neighbours/irqbalance_args.h"
#include "agent/act/neighbours/irqbalance_protocol.h"
#include "agent/act/neighbours/process_finder.h"
#include "agent/host/file_util.h"
#include "agent/host/proc_parse.h"
#include "agent/host/target_trust.h"
#include "common/os_error.h"
#include "common/printable.h"
#include "common/status_macros.h"
#include "common/unique_fd.h"

namespace locus {
namespace {

// A "setup" reply lists every banned IRQ in ~40 bytes; far more than any
// host's IRQs.
constexpr size_t kMaxReplyBytes = 1 << 20;
// How /proc/net/unix shows the abstract name of 108 zero bytes, and the
// flags of a listening socket (__SO_ACCEPTCON).
constexpr size_t kAbstractNameBytes = sizeof(sockaddr_un::sun_path);
constexpr absl::string_view kListeningFlags = "00010000";

std::string Where(const IrqbalanceInstance& instance) {
  if (instance.socket == kIrqbalanceAbstractSocket) {
    return "its abstract socket";
  }
  return instance.socket;
}

class SocketRequest : public IrqbalanceRequest {
 public:
  SocketRequest(UniqueFd fd, std::string what)
      : fd_(std::move(fd)), what_(std::move(what)) {}

  absl::StatusOr<std::optional<std::string>> Poll() override {
    if (!fd_.valid()) return std::optional<std::string>(reply_);
    char buffer[4096];
    for (;;) {
      const ssize_t n = recv(fd_.get(), buffer, sizeof(buffer), MSG_DONTWAIT);
      if (n > 0) {
        if (reply_.size() + n > kMaxReplyBytes) {
          fd_.reset();
          return absl::OutOfRangeError(absl::StrCat(
              what_, ": answer longer than ", kMaxReplyBytes, " bytes"));
        }
        reply_.append(buffer, n);
        continue;
      }
      if (n == 0) {
        fd_.reset();
        return std::optional<std::string>(reply_);
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return std::nullopt;
      const int err = errno;
      fd_.reset();
      return ErrnoStatus(absl::StrCat(what_, ": read the answer"), err);
    }
  }

 private:
  UniqueFd fd_;
  std::string what_;
  std::string reply_;
};

// The peer must be the irqbalance Find named, as root: whoever else holds
// the name could feed Locus a ban list or read its commands.
absl::Status CheckPeer(int fd, const IrqbalanceInstance& instance) {
  ucred peer{};
  socklen_t size = sizeof(peer);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0) {
    return LastErrnoStatus(absl::StrCat(Where(instance), ": SO_PEERCRED"));
  }
  if (peer.pid != instance.pid || peer.uid != 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        Where(instance), " is held by pid ", peer.pid, " uid ", peer.uid,
        ", not by ", IrqbalanceName(instance.pid), " as root; nothing sent"));
  }
  return absl::OkStatus();
}

// One sendmsg carrying SCM_CREDENTIALS: irqbalance reads once and acts
// only when the credentials say uid 0.
absl::Status SendWithCredentials(int fd, absl::string_view command,
                                 const std::string& what) {
  ucred self{getpid(), geteuid(), getegid()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))] = {};
  iovec iov{const_cast<char*>(command.data()), command.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_CREDENTIALS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(ucred));
  std::memcpy(CMSG_DATA(cmsg), &self, sizeof(self));
  const ssize_t sent = sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
  if (sent < 0) return LastErrnoStatus(absl::StrCat(what, ": send"));
  if (static_cast<size_t>(sent) != command.size()) {
    return absl::UnavailableError(absl::StrCat(
        what, ": sent ", sent, " of ", command.size(), " bytes; dropped"));
  }
  return absl::OkStatus();
}

absl::StatusOr<UniqueFd> Connect(const IrqbalanceInstance& instance) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (instance.socket != kIrqbalanceAbstractSocket) {
    if (instance.socket.empty() ||
        instance.socket.size() >= sizeof(addr.sun_path)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "irqbalance socket path '", Printable(instance.socket, 128),
          "' is empty or too long"));
    }
    std::memcpy(addr.sun_path, instance.socket.data(), instance.socket.size());
  }
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return LastErrnoStatus("irqbalance: socket");
  // Bound with the whole sockaddr_un by irqbalance, so connected with it.
  if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr),
              sizeof(addr)) != 0) {
    if (errno == EAGAIN) {
      return absl::UnavailableError(
          absl::StrCat(IrqbalanceName(instance.pid), " is busy: the queue of ",
                       Where(instance), " is full; asked again later"));
    }
    return LastErrnoStatus(absl::StrCat(IrqbalanceName(instance.pid),
                                        ": connect to ", Where(instance)));
  }
  return fd;
}

class SocketOps : public IrqbalanceOps {
 public:
  SocketOps(std::string procfs_root, std::string run_dir)
      : procfs_root_(std::move(procfs_root)),
        run_dir_(std::move(run_dir)),
        checker_(procfs_root_, "irqbalance") {}

  absl::StatusOr<std::optional<IrqbalanceInstance>> Find() override {
    ASSIGN_OR_RETURN(std::optional<int32_t> pid, FindPid());
    if (!pid.has_value()) return std::optional<IrqbalanceInstance>();
    ASSIGN_OR_RETURN(std::string socket, FindSocket(*pid));
    return std::optional<IrqbalanceInstance>(
        IrqbalanceInstance{*pid, std::move(socket), Interval(*pid)});
  }

  std::vector<std::string> LookAlikes() const override { return look_alikes_; }

  absl::StatusOr<std::unique_ptr<IrqbalanceRequest>> Start(
      const IrqbalanceInstance& instance, absl::string_view command) override {
    if (command.empty() || command.size() > kMaxIrqbalanceCommandBytes) {
      // An empty send leaves irqbalance waiting in its recvmsg for bytes
      // that never come; a long one is cut.
      return absl::InvalidArgumentError(
          absl::StrCat("irqbalance command of ", command.size(),
                       " bytes: it must be 1 to ", kMaxIrqbalanceCommandBytes));
    }
    const std::string what = absl::StrCat(IrqbalanceName(instance.pid), " '",
                                          Printable(command.substr(0, 32)),
                                          command.size() > 32 ? "...'" : "'");
    ASSIGN_OR_RETURN(UniqueFd fd, Connect(instance));
    RETURN_IF_ERROR(CheckPeer(fd.get(), instance));
    RETURN_IF_ERROR(SendWithCredentials(fd.get(), command, what));
    return std::unique_ptr<IrqbalanceRequest>(
        std::make_unique<SocketRequest>(std::move(fd), what));
  }

 private:
  absl::StatusOr<std::optional<int32_t>> FindPid();
  absl::StatusOr<std::string> FindSocket(int32_t pid);
  absl::Status CheckSocketFile(const std::string& path,
                               const struct stat& st) const;
  absl::StatusOr<bool> ListensAbstract(int32_t pid) const;
  int Interval(int32_t pid);

  std::string procfs_root_;
  std::string run_dir_;
  DaemonChecker checker_;  // the one found last, checked at every Find
  int32_t last_pid_ = 0;
  // The irqbalance last seen on the abstract socket: /proc/PID/net/unix,
  // which lists every socket of its network namespace, is read once.
  int32_t abstract_pid_ = 0;
  std::vector<std::string> look_alikes_;  // as the last scan found them
  // Its interval, read from its command line once per irqbalance.
  int32_t interval_pid_ = 0;
  int interval_ = 0;
};

// Only a root irqbalance counts (process_finder.h): a user's look-alike
// beside it neither makes two nor stands in for it.
absl::StatusOr<std::optional<int32_t>> SocketOps::FindPid() {
  if (last_pid_ > 0 && checker_.IsDaemon(last_pid_)) {
    return std::optional<int32_t>(last_pid_);
  }
  last_pid_ = 0;
  ASSIGN_OR_RETURN(DaemonSearch found, FindDaemons(procfs_root_, "irqbalance"));
  look_alikes_ = std::move(found.refused);
  if (found.genuine.empty()) return std::optional<int32_t>();
  if (found.genuine.size() > 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        found.genuine.size(), " irqbalance processes run as root (pids ",
        absl::StrJoin(found.genuine, ", "),
        "); Locus cannot tell which one moves the IRQs: stop all but one"));
  }
  last_pid_ = found.genuine[0];
  return std::optional<int32_t>(last_pid_);
}

absl::StatusOr<std::string> SocketOps::FindSocket(int32_t pid) {
  const std::string path = absl::StrCat(run_dir_, "/irqbalance", pid, ".sock");
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    RETURN_IF_ERROR(CheckSocketFile(path, st));
    return path;
  }
  if (errno != ENOENT && errno != ENOTDIR) {
    return LastErrnoStatus(absl::StrCat(IrqbalanceName(pid), ": ", path));
  }
  if (abstract_pid_ != pid) {
    ASSIGN_OR_RETURN(bool abstract, ListensAbstract(pid));
    if (!abstract) {
      return absl::FailedPreconditionError(absl::StrCat(
          IrqbalanceName(pid),
          " has no control socket Locus can reach: neither ", path,
          " nor the abstract one in its network namespace; restart it with ",
          run_dir_,
          " present (irqbalance.service creates it), or set "
          "coexist.irqbalance: off"));
    }
    abstract_pid_ = pid;
  }
  return std::string(kIrqbalanceAbstractSocket);
}

absl::Status SocketOps::CheckSocketFile(const std::string& path,
                                        const struct stat& st) const {
  if (!S_ISSOCK(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, " is not a socket; not irqbalance's, so Locus does not use it"));
  }
  if (st.st_uid != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, " is owned by uid ", st.st_uid,
        ", not root: someone else may answer in irqbalance's place; remove "
        "it and restart irqbalance"));
  }
  struct stat dir;
  if (lstat(run_dir_.c_str(), &dir) != 0) {
    return LastErrnoStatus(absl::StrCat("irqbalance's directory ", run_dir_));
  }
  if (!S_ISDIR(dir.st_mode) || !OnlyRootMayWrite(dir)) {
    return absl::FailedPreconditionError(absl::StrCat(
        run_dir_, " is not a directory only root can write to (owner uid ",
        dir.st_uid, ", mode ", absl::StrFormat("%04o", dir.st_mode & 07777),
        "): a user could put a socket of their own in irqbalance's place; "
        "make it root's, mode 0755"));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> SocketOps::ListensAbstract(int32_t pid) const {
  const std::string path =
      JoinPath(procfs_root_, absl::StrCat("/", pid, "/net/unix"));
  absl::StatusOr<std::string> table = ReadTextFile(path, kMaxTcpTableBytes);
  // Gone: the process ended since it was found; it listens nowhere.
  if (absl::IsNotFound(table.status())) return false;
  if (!table.ok()) return table.status();
  const std::string name(kAbstractNameBytes, '@');
  // "Num RefCount Protocol Flags Type St Inode Path", one socket a line.
  for (absl::string_view line : absl::StrSplit(*table, '\n')) {
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() == 8 && fields[3] == kListeningFlags &&
        fields[7] == name) {
      return true;
    }
  }
  return false;
}

// A command line that cannot be read (gone since) leaves it unknown: 0.
int SocketOps::Interval(int32_t pid) {
  if (interval_pid_ != pid) {
    absl::StatusOr<std::string> cmdline = ReadTextFile(
        JoinPath(procfs_root_, absl::StrCat("/", pid, "/cmdline")));
    interval_ =
        cmdline.ok() ? IrqbalanceIntervalArg(ParseCmdlineArgs(*cmdline)) : 0;
    interval_pid_ = pid;
  }
  return interval_;
}

}  // namespace

std::unique_ptr<IrqbalanceOps> MakeIrqbalanceSocketOps(std::string procfs_root,
                                                       std::string run_dir) {
  return std::make_unique<SocketOps>(std::move(procfs_root),
                                     std::move(run_dir));
}

absl::StatusOr<std::string> IrqbalanceRequestBlocking(
    IrqbalanceOps& ops, const IrqbalanceInstance& instance,
    absl::string_view command, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  ASSIGN_OR_RETURN(std::unique_ptr<IrqbalanceRequest> request,
                   ops.Start(instance, command));
  for (;;) {
    ASSIGN_OR_RETURN(std::optional<std::string> reply, request->Poll());
    if (reply.has_value()) return *std::move(reply);
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          IrqbalanceName(instance.pid), " did not answer '",
          Printable(command.substr(0, 32)), "' within ",
          absl::FormatDuration(timeout),
          " (it answers between scans, and a rescan holds it for its "
          "sleep interval)"));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

}  // namespace locus
