#include "agent/host/target_trust.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/host/file_util.h"
#include "agent/host/proc_parse.h"
#include "common/os_error.h"
#include "common/printable.h"

namespace locus {

std::string ExecutablePath(const std::string& proc_dir) {
  char buf[4096];
  ssize_t n = readlink(JoinPath(proc_dir, "exe").c_str(), buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  std::string target(buf, static_cast<size_t>(n));
  // An upgraded binary still running shows as "/usr/sbin/nginx (deleted)".
  const std::string deleted = " (deleted)";
  if (absl::EndsWith(target, deleted)) {
    target.resize(target.size() - deleted.size());
  }
  return target;
}

std::string ExecutableProblem(const std::string& dir) {
  const std::string link = JoinPath(dir, "exe");
  struct stat st;  // of the file the link names, even once deleted
  if (stat(link.c_str(), &st) != 0) {
    return ErrnoMessage(absl::StrCat("its executable (", link, ")"), errno);
  }
  const std::string exe = Clip(ExecutablePath(dir));
  if (st.st_uid != 0) {
    return absl::StrCat("its executable ", exe, " is owned by uid ", st.st_uid,
                        ", not root");
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return absl::StrCat("its executable ", exe,
                        " may be written by group or others");
  }
  return "";
}

std::string NotRootProblem(absl::string_view status) {
  absl::StatusOr<StatusUids> uids = ParseStatusUids(status);
  if (!uids.ok()) return absl::StrCat("its status: ", uids.status().message());
  if (uids->real != 0 || uids->effective != 0) {
    return absl::StrCat("it runs as uid ", uids->real, " (effective ",
                        uids->effective, "), not root");
  }
  return "";
}

std::string TrustCheck::NotInUnit(const std::string& dir) const {
  const std::string& unit = trust_.systemd_unit;
  const std::string not_in = absl::StrCat("it is not in ", unit);
  auto cgroup = ReadTextFile(JoinPath(dir, "cgroup"));
  if (!cgroup.ok()) return not_in;
  const std::string path = ParseCgroupPath(*cgroup);
  // The unit of the system's manager that holds the process: its name comes
  // from cgroups only root can make, unlike any name further down.
  const std::string holder = SystemdUnitOf(path);
  if (holder == unit && !IsUserManagerUnit(unit)) return "";
  const std::vector<absl::string_view> parts =
      absl::StrSplit(path, '/', absl::SkipEmpty());
  if (std::find(parts.begin(), parts.end(), unit) == parts.end()) {
    return not_in;
  }
  // A cgroup of that name below another unit: a user's `systemd-run --user
  // --unit=nginx.service`, or a container's own manager.
  return absl::StrCat(
      "it is not in the system's ", unit, ": its cgroup of that name is ",
      holder.empty() ? "in no unit of the system's service manager"
                     : absl::StrCat("inside ", holder),
      IsUserManagerUnit(holder) ? ", a user's own service manager" : "");
}

const std::string& TrustCheck::MasterProblem(int32_t master) {
  auto [it, inserted] = master_problems_.try_emplace(master);
  if (!inserted) return it->second;
  const std::string path =
      JoinPath(procfs_root_, absl::StrCat(master, "/status"));
  auto text = ReadTextFile(path);
  auto uid = text.ok() ? ParseStatusRealUid(*text) : text.status();
  if (!uid.ok()) {
    it->second = absl::StrCat(path, ": ", uid.status().message());
  } else if (*uid != 0) {
    it->second = absl::StrCat("pid ", master, " was started by uid ", *uid,
                              ", not root");
  }
  return it->second;
}

std::string TrustCheck::WhyNot(int32_t pid, int32_t master) {
  const std::string dir = JoinPath(procfs_root_, absl::StrCat(pid));
  const bool by_unit = !trust_.systemd_unit.empty();
  const std::string not_in_unit = by_unit ? NotInUnit(dir) : "";
  if (by_unit && not_in_unit.empty()) return "";
  std::string why = ExecutableProblem(dir);
  if (why.empty()) why = MasterProblem(master);
  if (why.empty()) return "";
  if (pid != master) absl::StrAppend(&why, " (its master is pid ", master, ")");
  if (by_unit) absl::StrAppend(&why, "; and ", not_in_unit);
  return absl::StrCat("not trusted as a target: ", why);
}

}  // namespace locus
