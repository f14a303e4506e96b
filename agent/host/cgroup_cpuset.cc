#include "agent/host/cgroup_cpuset.h"

#include <sys/stat.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/host/file_util.h"
#include "agent/host/proc_parse.h"
#include "policy/cpu_list.h"

namespace locus {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The file names of a version's effective cpuset.
struct Files {
  const char* cpus;
  const char* mems;
};
constexpr Files kV1 = {"cpuset.effective_cpus", "cpuset.effective_mems"};
constexpr Files kV2 = {"cpuset.cpus.effective", "cpuset.mems.effective"};

absl::StatusOr<std::vector<int>> ReadList(const std::string& path) {
  absl::StatusOr<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::vector<int>> list = ParseCpuList(*text);
  if (!list.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", list.status().message()));
  }
  return list;
}

}  // namespace

CpusetCgroup CpusetCgroupOf(absl::string_view proc_cgroup) {
  CpusetCgroup out;
  for (const CgroupLine& line : ParseCgroupLines(proc_cgroup)) {
    if (line.hierarchy == "0" && line.controllers.empty()) {
      if (out.path.empty()) out = {2, std::string(line.path)};
      continue;
    }
    for (absl::string_view c : absl::StrSplit(line.controllers, ',')) {
      if (c == "cpuset") return {1, std::string(line.path)};
    }
  }
  return out;
}

CgroupCpusetReader::Read CgroupCpusetReader::ReadCgroup(
    const CpusetCgroup& cgroup) const {
  const std::string hierarchy =
      cgroup.version == 1 ? JoinPath(root_, "cpuset") : root_;
  const Files files = cgroup.version == 1 ? kV1 : kV2;
  Read out;
  std::string dir = JoinPath(hierarchy, cgroup.path);
  if (!IsDirectory(dir)) {
    // No hierarchy mounted here: nothing constrains. Otherwise the cgroup
    // went away after the process named it (the pod was deleted).
    if (IsDirectory(hierarchy))
      out.error = absl::StrCat(dir, ": no such cgroup");
    return out;
  }
  // In v2 a cgroup without the cpuset controller has no cpuset files and
  // is held by its nearest ancestor's; v1 names the files in every cgroup.
  std::string path = cgroup.path;
  while (true) {
    dir = JoinPath(hierarchy, path);
    absl::StatusOr<std::vector<int>> cpus = ReadList(JoinPath(dir, files.cpus));
    if (cpus.ok()) {
      absl::StatusOr<std::vector<int>> mems =
          ReadList(JoinPath(dir, files.mems));
      if (!mems.ok()) {
        out.error = std::string(mems.status().message());
        return out;
      }
      out.cpuset = {*std::move(cpus), *std::move(mems)};
      out.constrained = true;
      return out;
    }
    if (!absl::IsNotFound(cpus.status())) {
      out.error = std::string(cpus.status().message());
      return out;
    }
    if (!IsDirectory(dir)) {
      out.error = absl::StrCat(dir, ": cgroup removed while read");
      return out;
    }
    if (path.empty() || path == "/") return out;  // no cpuset controller
    const size_t slash = path.rfind('/');
    path = slash == std::string::npos ? "" : path.substr(0, slash);
  }
}

void CgroupCpusetReader::Fill(const std::string& procfs_root,
                              std::vector<Target>& targets,
                              std::vector<std::string>* errors) {
  scan_.clear();
  for (Target& target : targets) {
    absl::StatusOr<std::string> text = ReadTextFile(
        JoinPath(procfs_root, absl::StrCat(target.pid, "/cgroup")));
    if (!text.ok()) {
      // Gone since the scan listed it: normal.
      if (!absl::IsNotFound(text.status())) {
        errors->push_back(std::string(text.status().message()));
      }
      continue;
    }
    const CpusetCgroup cgroup = CpusetCgroupOf(*text);
    if (cgroup.path.empty()) continue;
    target.cgroup = cgroup.path;
    const std::string key = absl::StrCat(cgroup.version, ":", cgroup.path);
    auto [it, fresh] = scan_.try_emplace(key);
    if (fresh) {
      it->second = ReadCgroup(cgroup);
      if (!it->second.error.empty()) errors->push_back(it->second.error);
    }
    if (!it->second.constrained) continue;
    target.cgroup_cpus = it->second.cpuset.cpus;
    target.cgroup_mems = it->second.cpuset.mems;
  }
}

}  // namespace locus
