#include "agent/host/cgroup_cpuset.h"

#include <sys/stat.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
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
// A cpulist of every other CPU of 8,192 is under 40 KiB; more in a cpuset
// file is not the kernel's.
constexpr size_t kMaxCpusetFileBytes = 64 * 1024;
constexpr Files kV1 = {"cpuset.effective_cpus", "cpuset.effective_mems"};
constexpr Files kV2 = {"cpuset.cpus.effective", "cpuset.mems.effective"};

// Where a version's cpuset hierarchy is mounted under the cgroupfs root.
std::string Hierarchy(const std::string& root, const CpusetCgroup& cgroup) {
  return cgroup.version == 1 ? JoinPath(root, "cpuset") : root;
}

// How many "/.." `path` starts with; `rest` is what follows ("/a/b").
int LeadingUps(absl::string_view path, absl::string_view* rest) {
  int ups = 0;
  while (absl::StartsWith(path, "/..") &&
         (path.size() == 3 || path[3] == '/')) {
    path.remove_prefix(3);
    ++ups;
  }
  *rest = path;
  return ups;
}

// The cgroups `depth` levels below the hierarchy's root, as paths from it
// ("" for the root itself).
std::vector<std::string> CgroupsAtDepth(const std::string& hierarchy,
                                        int depth) {
  std::vector<std::string> level = {""};
  for (int d = 0; d < depth; ++d) {
    std::vector<std::string> next;
    for (const std::string& parent : level) {
      absl::StatusOr<std::vector<std::string>> names =
          ListDirectory(JoinPath(hierarchy, parent));
      if (!names.ok()) continue;
      for (const std::string& name : *names) {
        std::string child = absl::StrCat(parent, "/", name);
        if (IsDirectory(JoinPath(hierarchy, child))) {
          next.push_back(std::move(child));
        }
      }
    }
    level = std::move(next);
  }
  return level;
}

absl::StatusOr<std::vector<int>> ReadList(const std::string& path) {
  absl::StatusOr<std::string> text = ReadTextFile(path, kMaxCpusetFileBytes);
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
  const std::string hierarchy = Hierarchy(root_, cgroup);
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

std::string CgroupCpusetReader::Absolute(const CpusetCgroup& cgroup,
                                         int ns_depth) {
  absl::string_view rest;
  const int ups = LeadingUps(cgroup.path, &rest);
  if (ups == 0) return cgroup.path;
  const std::string hierarchy = Hierarchy(root_, cgroup);
  const std::string key = absl::StrCat(cgroup.version, ":", cgroup.path);
  if (auto known = absolute_.find(key);
      known != absolute_.end() &&
      IsDirectory(JoinPath(hierarchy, known->second))) {
    return known->second;
  }
  std::string found;
  if (ns_depth >= ups) {
    for (const std::string& dir : CgroupsAtDepth(hierarchy, ns_depth - ups)) {
      const std::string path = absl::StrCat(dir, rest);
      if (!IsDirectory(JoinPath(hierarchy, path))) continue;
      if (!found.empty()) return "";  // several: not a guess to act on
      found = path.empty() ? "/" : path;
    }
  }
  if (!found.empty()) absolute_[key] = found;
  return found;
}

bool CgroupCpusetReader::Locate(const std::string& procfs_root, int32_t pid,
                                CpusetCgroup* cgroup, int* ns_depth,
                                std::vector<std::string>* errors) {
  absl::StatusOr<std::string> text =
      ReadTextFile(JoinPath(procfs_root, absl::StrCat(pid, "/cgroup")));
  if (!text.ok()) {
    // Gone since the scan listed it: normal.
    if (!absl::IsNotFound(text.status())) {
      errors->push_back(std::string(text.status().message()));
    }
    return false;
  }
  *cgroup = CpusetCgroupOf(*text);
  if (cgroup->path.empty()) return false;
  if (!absl::StartsWith(cgroup->path, "/..")) return true;
  if (*ns_depth < 0) {
    // init sits at the root: its path is as many ".." as locusd is deep.
    absl::StatusOr<std::string> init =
        ReadTextFile(JoinPath(procfs_root, "1/cgroup"));
    absl::string_view rest;
    *ns_depth = init.ok() ? LeadingUps(CpusetCgroupOf(*init).path, &rest) : 0;
  }
  std::string absolute = Absolute(*cgroup, *ns_depth);
  if (absolute.empty() && !IsDirectory(Hierarchy(root_, *cgroup))) {
    return false;  // no cgroups mounted where we look: nothing constrains
  }
  if (absolute.empty()) {
    errors->push_back(absl::StrCat("pid ", pid, ": cgroup ", cgroup->path,
                                   " (seen from a cgroup namespace) not "
                                   "found once under ",
                                   Hierarchy(root_, *cgroup)));
    return false;
  }
  cgroup->path = std::move(absolute);
  return true;
}

void CgroupCpusetReader::Fill(const std::string& procfs_root,
                              std::vector<Target>& targets,
                              std::vector<std::string>* errors) {
  scan_.clear();
  int ns_depth = -1;  // read when a path needs it
  for (Target& target : targets) {
    CpusetCgroup cgroup;
    if (!Locate(procfs_root, target.pid, &cgroup, &ns_depth, errors)) {
      continue;
    }
    const std::string key = absl::StrCat(cgroup.version, ":", cgroup.path);
    auto [it, fresh] = scan_.try_emplace(key);
    if (fresh) {
      Read read = ReadCgroup(cgroup);
      if (!read.error.empty()) errors->push_back(read.error);
      it->second = std::make_shared<const CgroupCpuset>(
          CgroupCpuset{.path = cgroup.path,
                       .cpus = std::move(read.cpuset.cpus),
                       .mems = std::move(read.cpuset.mems),
                       .placed_by = {}});
    }
    target.cgroup = it->second;
  }
}

}  // namespace locus
