#include "agent/host/target_trust.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/host/file_util.h"
#include "agent/host/proc_parse.h"
#include "common/os_error.h"

namespace locus {
namespace {

// Why the executable of the process in `dir` is not one only root controls,
// or "".
std::string ExecutableProblem(const std::string& dir) {
  const std::string link = JoinPath(dir, "exe");
  struct stat st;  // of the file the link names, even once deleted
  if (stat(link.c_str(), &st) != 0) {
    return ErrnoMessage(absl::StrCat("its executable (", link, ")"), errno);
  }
  const std::string exe = ExecutablePath(dir);
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

}  // namespace

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

bool TrustCheck::InUnit(const std::string& dir) const {
  if (trust_.systemd_unit.empty()) return false;
  auto cgroup = ReadTextFile(JoinPath(dir, "cgroup"));
  return cgroup.ok() &&
         SystemdUnitOf(ParseCgroupPath(*cgroup)) == trust_.systemd_unit;
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
  if (InUnit(dir)) return "";
  std::string why = ExecutableProblem(dir);
  if (why.empty()) why = MasterProblem(master);
  if (why.empty()) return "";
  if (pid != master) absl::StrAppend(&why, " (its master is pid ", master, ")");
  if (!trust_.systemd_unit.empty()) {
    absl::StrAppend(&why, "; and it is not in ", trust_.systemd_unit);
  }
  return absl::StrCat("not trusted as a target: ", why);
}

}  // namespace locus
