#include "agent/journal/journal.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/host/cpu_mask.h"
#include "agent/journal/journal_lock.h"
#include "common/os_error.h"
#include "common/status_macros.h"
#include "common/unique_fd.h"

namespace locus {
namespace {

std::string DirName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

absl::Status SyncDir(const std::string& dir) {
  UniqueFd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd || fsync(fd.get()) != 0) {
    return absl::FailedPreconditionError(ErrnoMessage(dir, errno));
  }
  return absl::OkStatus();
}

// mkdir -p with 0700: the journal says which threads and IRQs were moved,
// which is nobody else's business.
absl::Status MakeDirs(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat(dir, ": not a directory"));
  }
  std::string parent = DirName(dir);
  if (parent != dir) RETURN_IF_ERROR(MakeDirs(parent));
  if (mkdir(dir.c_str(), 0700) != 0) {
    if (errno == EEXIST) return absl::OkStatus();
    return absl::FailedPreconditionError(ErrnoMessage(dir, errno));
  }
  // A new directory is only durable once its parent's entry is.
  return SyncDir(parent);
}

std::string WithCrc(const std::string& body) {
  return absl::StrFormat("%s %08x\n", body, Crc32(body));
}

// "<path>.bad.<UTC time>", with a suffix when that name is taken.
std::string FreeBadName(const std::string& path) {
  const std::string base = absl::StrCat(
      path, ".bad.",
      absl::FormatTime("%Y%m%dT%H%M%SZ", absl::Now(), absl::UTCTimeZone()));
  std::string name = base;
  struct stat st;
  for (int i = 1; lstat(name.c_str(), &st) == 0; ++i) {
    name = absl::StrCat(base, ".", i);
  }
  return name;
}

}  // namespace

absl::StatusOr<std::string> ResolveJournalPath(const std::string& path) {
  std::string current = path;
  // As many links as the kernel follows (MAXSYMLINKS) before ELOOP.
  for (int links = 0; links < 40; ++links) {
    const std::string dir = DirName(current);
    char resolved[PATH_MAX];
    if (realpath(dir.c_str(), resolved) == nullptr) {
      if (errno == ENOENT) return current;  // nothing there to resolve yet
      return absl::FailedPreconditionError(ErrnoMessage(dir, errno));
    }
    const std::string name = current.substr(current.find_last_of('/') + 1);
    const std::string real_dir = resolved;
    current = real_dir == "/" ? "/" + name : real_dir + "/" + name;
    struct stat st;
    if (lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
      return current;
    }
    char target[PATH_MAX];
    ssize_t n = readlink(current.c_str(), target, sizeof(target) - 1);
    if (n <= 0)
      return absl::FailedPreconditionError(ErrnoMessage(current, errno));
    const std::string link(target, static_cast<size_t>(n));
    current = link[0] == '/' ? link : real_dir + "/" + link;
  }
  return absl::FailedPreconditionError(
      absl::StrCat(path, ": too many symbolic links"));
}

absl::StatusOr<std::unique_ptr<Journal>> Journal::Open(
    const JournalOptions& options) {
  if (options.path.empty()) {
    return absl::InvalidArgumentError("journal path is empty");
  }
  std::unique_ptr<Journal> journal(new Journal(options));
  ASSIGN_OR_RETURN(journal->options_.path, ResolveJournalPath(options.path));
  // Locked before it is read: what another daemon is still appending to is
  // not this one's to restore or delete.
  ASSIGN_OR_RETURN(journal->held_, LockJournalFileAt(journal->options_.path));
  ASSIGN_OR_RETURN(journal->contents_, ReadJournal(journal->options_.path));
  return journal;
}

absl::Status Journal::EnsureOpen() {
  if (fd_) return absl::OkStatus();
  const std::string dir = DirName(options_.path);
  RETURN_IF_ERROR(MakeDirs(dir));
  bool created = access(options_.path.c_str(), F_OK) != 0;
  UniqueFd fd(open(options_.path.c_str(),
                   O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
                   0600));
  if (!fd) {
    return absl::FailedPreconditionError(ErrnoMessage(options_.path, errno));
  }
  RETURN_IF_ERROR(Hold(fd.get()));
  // A new directory entry must survive a crash too, or the journal could
  // vanish with the records in it.
  if (created) RETURN_IF_ERROR(SyncDir(dir));
  fd_ = std::move(fd);
  return absl::OkStatus();
}

// A file this Journal did not lock yet (created now, after a Clear, or put
// there by someone else) is locked before the first record goes in.
absl::Status Journal::Hold(int fd) {
  struct stat now;
  struct stat held;
  if (held_ && fstat(held_.get(), &held) == 0 && fstat(fd, &now) == 0 &&
      held.st_dev == now.st_dev && held.st_ino == now.st_ino) {
    return absl::OkStatus();
  }
  // Its own descriptor of the same open file: the lock then outlives fd_,
  // which Clear closes first.
  UniqueFd dup(fcntl(fd, F_DUPFD_CLOEXEC, 0));
  if (!dup) {
    return absl::FailedPreconditionError(ErrnoMessage(options_.path, errno));
  }
  RETURN_IF_ERROR(LockJournalFile(dup.get(), options_.path));
  held_ = std::move(dup);
  return absl::OkStatus();
}

absl::Status Journal::Append(const std::string& body) {
  last_error_ = AppendRecord(body);
  return last_error_;
}

absl::Status Journal::AppendRecord(const std::string& body) {
  if (!broken_.ok()) return broken_;
  absl::Status status = EnsureOpen();
  if (!status.ok()) {
    // Not broken: nothing was written, a later tick may find space/rights.
    return absl::FailedPreconditionError(
        absl::StrCat("journal not writable, not acting: ", status.message()));
  }
  const std::string line = WithCrc(body);
  ssize_t n = write(fd_.get(), line.data(), line.size());
  int err = errno;
  if (n < 0) {
    // Nothing reached the file, so it is not torn: later appends stay safe.
    return absl::FailedPreconditionError(
        absl::StrCat("journal not writable, not acting: ",
                     ErrnoMessage(options_.path, err)));
  }
  if (n == static_cast<ssize_t>(line.size())) {
    if (fdatasync(fd_.get()) == 0) return absl::OkStatus();
    err = errno;  // written but maybe not durable
  } else {
    err = ENOSPC;  // a short write: the disk filled up mid-record
  }
  // The file may now end in a torn record; a record appended after it would
  // be glued to it and lost, so no more appends until the journal is cleared.
  broken_ = absl::FailedPreconditionError(
      absl::StrCat("journal damaged, not acting until restored: ",
                   ErrnoMessage(options_.path, err)));
  return broken_;
}

absl::Status Journal::RecordThread(const ThreadEntry& entry) {
  if (HasThread(entry.tid)) return absl::OkStatus();
  if (entry.cpus.empty()) {
    return absl::InvalidArgumentError("thread entry without CPUs");
  }
  absl::Status status =
      Append(absl::StrCat("T ", entry.pid, " ", entry.tid, " ",
                          entry.start_time, " ", FormatCpuList(entry.cpus)));
  if (status.ok()) contents_.threads.emplace(entry.tid, entry);
  return status;
}

absl::Status Journal::RecordIrq(const IrqEntry& entry) {
  if (HasIrq(entry.irq)) return absl::OkStatus();
  if (entry.cpus.empty()) {
    return absl::InvalidArgumentError("irq entry without CPUs");
  }
  absl::Status status =
      Append(absl::StrCat("I ", entry.irq, " ", FormatCpuList(entry.cpus)));
  if (status.ok()) contents_.irqs.emplace(entry.irq, entry);
  return status;
}

absl::Status Journal::ForgetThread(int32_t tid) {
  if (!HasThread(tid)) return absl::OkStatus();
  // Forget in memory even if the record fails: a restore of a stale entry is
  // harmless (start time or affinity no longer match) and must not block.
  contents_.threads.erase(tid);
  return Append(absl::StrCat("-T ", tid));
}

absl::Status Journal::ForgetIrq(int irq) {
  if (!HasIrq(irq)) return absl::OkStatus();
  contents_.irqs.erase(irq);
  return Append(absl::StrCat("-I ", irq));
}

absl::Status Journal::RecordSteered(const ListenKey& group) {
  if (HasSteered(group)) return absl::OkStatus();
  if (group.address.family != AF_INET && group.address.family != AF_INET6) {
    return absl::InvalidArgumentError("steering entry of no IP family");
  }
  absl::Status status = Append(
      absl::StrCat("R ", group.netns, " ", ListenAddressString(group.address)));
  if (status.ok()) contents_.steered.insert(group);
  return status;
}

absl::Status Journal::ForgetSteered(const ListenKey& group) {
  if (!HasSteered(group)) return absl::OkStatus();
  contents_.steered.erase(group);
  return Append(absl::StrCat("-R ", group.netns, " ",
                             ListenAddressString(group.address)));
}

namespace {

// One "B"/"N" entry: recorded once per (owner, id); a new owner replaces it.
absl::Status RecordOwned(std::map<int32_t, int32_t>& entries, char kind,
                         int32_t owner, int32_t id,
                         absl::FunctionRef<absl::Status(std::string)> append) {
  if (owner <= 0 || id <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("neighbour entry '", std::string(1, kind), " ", owner, " ",
                     id, "' names no process"));
  }
  auto it = entries.find(id);
  if (it != entries.end() && it->second == owner) return absl::OkStatus();
  absl::Status status =
      append(absl::StrCat(std::string(1, kind), " ", owner, " ", id));
  if (status.ok()) entries[id] = owner;
  return status;
}

absl::Status ForgetOwned(std::map<int32_t, int32_t>& entries, char kind,
                         int32_t id,
                         absl::FunctionRef<absl::Status(std::string)> append) {
  if (entries.erase(id) == 0) return absl::OkStatus();
  return append(absl::StrCat("-", std::string(1, kind), " ", id));
}

// A copy of the ids first: ForgetOwned erases from `entries`.
absl::Status ForgetOwnedWhere(
    std::map<int32_t, int32_t>& entries, char kind, Journal::OwnedFilter which,
    absl::FunctionRef<absl::Status(std::string)> append) {
  std::vector<int32_t> ids;
  for (const auto& [id, owner] : entries) {
    if (which(id, owner)) ids.push_back(id);
  }
  for (int32_t id : ids) {
    if (absl::Status forgot = ForgetOwned(entries, kind, id, append);
        !forgot.ok()) {
      return forgot;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Journal::ForgetIrqbalanceBansWhere(OwnedFilter which) {
  return ForgetOwnedWhere(contents_.irqbalance_bans, 'B', which,
                          [this](std::string body) { return Append(body); });
}

absl::Status Journal::ForgetNumadExclusionsWhere(OwnedFilter which) {
  return ForgetOwnedWhere(contents_.numad_exclusions, 'N', which,
                          [this](std::string body) { return Append(body); });
}

absl::Status Journal::RecordIrqbalanceBan(int32_t irqbalance_pid, int irq) {
  return RecordOwned(contents_.irqbalance_bans, 'B', irqbalance_pid, irq,
                     [this](std::string body) { return Append(body); });
}

absl::Status Journal::RecordNumadExclusion(int32_t numad_pid, int32_t pid) {
  return RecordOwned(contents_.numad_exclusions, 'N', numad_pid, pid,
                     [this](std::string body) { return Append(body); });
}

absl::Status Journal::ForgetNumadExclusion(int32_t pid) {
  return ForgetOwned(contents_.numad_exclusions, 'N', pid,
                     [this](std::string body) { return Append(body); });
}

absl::Status Journal::CheckClearable() const {
  struct stat st;
  if (lstat(options_.path.c_str(), &st) != 0) return absl::OkStatus();
  const std::string dir = DirName(options_.path);
  if (faccessat(AT_FDCWD, dir.c_str(), W_OK, AT_EACCESS) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the journal ", options_.path, " could not be removed afterwards (",
        ErrnoMessage(dir, errno), ")"));
  }
  return absl::OkStatus();
}

absl::Status Journal::Clear() {
  fd_.reset();
  // Let go of the lock on return, once the file is deleted or set aside:
  // never while another daemon could still take it.
  const UniqueFd held = std::move(held_);
  // Anything dropped (a damaged record, a torn or overlong tail) may be
  // what an operator needs to restore by hand: never deleted.
  const bool damaged = contents_.dropped_content();
  contents_ = JournalContents{};
  broken_ = absl::OkStatus();
  last_error_ = absl::OkStatus();
  kept_copy_.clear();
  if (damaged) {
    std::string bad = FreeBadName(options_.path);
    if (rename(options_.path.c_str(), bad.c_str()) != 0) {
      if (errno == ENOENT) return absl::OkStatus();
      return absl::FailedPreconditionError(ErrnoMessage(bad, errno));
    }
    kept_copy_ = std::move(bad);
    return SyncDir(DirName(options_.path));
  }
  if (unlink(options_.path.c_str()) != 0) {
    int err = errno;
    // No journal is a cleared journal, even on a read-only mount, where
    // unlink reports EROFS before it looks for the file.
    struct stat st;
    if (err == ENOENT ||
        (lstat(options_.path.c_str(), &st) != 0 && errno == ENOENT)) {
      return absl::OkStatus();
    }
    return absl::FailedPreconditionError(ErrnoMessage(options_.path, err));
  }
  return SyncDir(DirName(options_.path));
}

}  // namespace locus
