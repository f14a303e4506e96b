#include "agent/act/neighbours/process_finder.h"

#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/host/file_util.h"
#include "agent/host/proc_parse.h"
#include "agent/host/target_trust.h"
#include "common/printable.h"

namespace locus {
namespace {

constexpr size_t kMaxStatBytes = 64 << 10;
// A checker sees a handful of pids (the last found, a pid file's): bounded
// all the same, should pid files name ever new ones.
constexpr size_t kMaxVerdicts = 16;

absl::StatusOr<std::vector<std::string>> ListProc(
    const std::string& procfs_root, absl::string_view comm) {
  absl::StatusOr<std::vector<std::string>> names = ListDirectory(procfs_root);
  if (!names.ok()) {
    return absl::Status(
        names.status().code(),
        absl::StrCat("looking for ", comm, ": ", names.status().message()));
  }
  return names;
}

// `pid`'s stat when it runs as `comm` and is not a zombie.
std::optional<ProcStat> LiveStat(const std::string& procfs_root, int32_t pid,
                                 absl::string_view comm) {
  absl::StatusOr<std::string> text = ReadTextFile(
      JoinPath(procfs_root, absl::StrCat("/", pid, "/stat")), kMaxStatBytes);
  if (!text.ok()) return std::nullopt;
  absl::StatusOr<ProcStat> stat = ParseProcStat(*text);
  if (!stat.ok() || stat->comm != comm || stat->state == 'Z' ||
      stat->state == 'X') {
    return std::nullopt;
  }
  return *std::move(stat);
}

// Identify's verdict on a process that runs as `comm`: who runs it, from
// which binary. `read` (optional): whether its status could be read, so
// that the verdict holds for the process's life.
Identity Judge(const std::string& procfs_root, int32_t pid,
               absl::string_view comm, bool* read = nullptr) {
  Identity identity;
  identity.named = true;
  const std::string dir = JoinPath(procfs_root, absl::StrCat("/", pid));
  absl::StatusOr<std::string> status =
      ReadTextFile(JoinPath(dir, "/status"), kMaxStatBytes);
  if (read != nullptr) *read = status.ok();
  // Gone since its stat was read, or unreadable: not shown to be root's.
  std::string why = status.ok() ? NotRootProblem(*status)
                                : std::string(status.status().message());
  // The uid first: the binary of a user's look-alike is often root's own
  // (a link to /usr/bin/sleep named irqbalance).
  if (why.empty()) why = ExecutableProblem(dir);
  if (why.empty()) {
    identity.genuine = true;
    return identity;
  }
  absl::StatusOr<uint32_t> uid =
      status.ok() ? ParseStatusRealUid(*status) : status.status();
  identity.refused = Printable(absl::StrCat(
      "a process named ", comm, " (pid ", pid, ", uid ",
      uid.ok() ? absl::StrCat(*uid) : "unknown", ") is not root's: ", why,
      "; refused: Locus neither counts it nor speaks to it"));
  return identity;
}

}  // namespace

bool RunsAs(const std::string& procfs_root, int32_t pid,
            absl::string_view comm) {
  return LiveStat(procfs_root, pid, comm).has_value();
}

Identity Identify(const std::string& procfs_root, int32_t pid,
                  absl::string_view comm) {
  if (!RunsAs(procfs_root, pid, comm)) return Identity();
  return Judge(procfs_root, pid, comm);
}

Identity DaemonChecker::Identify(int32_t pid) {
  std::optional<ProcStat> stat = LiveStat(procfs_root_, pid, comm_);
  if (!stat.has_value()) {
    verdicts_.erase(pid);
    return Identity();
  }
  auto known = verdicts_.find(pid);
  if (known != verdicts_.end() &&
      known->second.start_time == stat->start_time) {
    return known->second.identity;
  }
  bool read = false;
  Identity identity = Judge(procfs_root_, pid, comm_, &read);
  // A status that could not be read (gone, or a passing error) settles
  // nothing: judged again next time.
  if (!read) {
    verdicts_.erase(pid);
    return identity;
  }
  if (verdicts_.size() >= kMaxVerdicts) verdicts_.clear();
  verdicts_[pid] = Verdict{stat->start_time, identity};
  return identity;
}

bool IsDaemon(const std::string& procfs_root, int32_t pid,
              absl::string_view comm) {
  return Identify(procfs_root, pid, comm).genuine;
}

absl::StatusOr<DaemonSearch> FindDaemons(const std::string& procfs_root,
                                         absl::string_view comm) {
  absl::StatusOr<std::vector<std::string>> names = ListProc(procfs_root, comm);
  if (!names.ok()) return names.status();
  DaemonSearch found;
  for (const std::string& name : *names) {
    int32_t pid = 0;
    if (!absl::SimpleAtoi(name, &pid) || pid <= 0) continue;
    Identity identity = Identify(procfs_root, pid, comm);
    if (identity.genuine) {
      found.genuine.push_back(pid);
    } else if (identity.named) {
      found.refused.push_back(std::move(identity.refused));
    }
  }
  return found;
}

absl::StatusOr<std::vector<int32_t>> FindProcessesNamed(
    const std::string& procfs_root, absl::string_view comm) {
  absl::StatusOr<std::vector<std::string>> names = ListProc(procfs_root, comm);
  if (!names.ok()) return names.status();
  std::vector<int32_t> found;
  for (const std::string& name : *names) {
    int32_t pid = 0;
    if (absl::SimpleAtoi(name, &pid) && pid > 0 &&
        RunsAs(procfs_root, pid, comm)) {
      found.push_back(pid);
    }
  }
  return found;
}

}  // namespace locus
