#include "agent/act/neighbours/process_finder.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/host/file_util.h"
#include "agent/host/proc_parse.h"

namespace locus {
namespace {

constexpr size_t kMaxStatBytes = 64 << 10;

}  // namespace

bool RunsAs(const std::string& procfs_root, int32_t pid,
            absl::string_view comm) {
  absl::StatusOr<std::string> text = ReadTextFile(
      JoinPath(procfs_root, absl::StrCat("/", pid, "/stat")), kMaxStatBytes);
  if (!text.ok()) return false;
  absl::StatusOr<ProcStat> stat = ParseProcStat(*text);
  return stat.ok() && stat->comm == comm && stat->state != 'Z' &&
         stat->state != 'X';
}

absl::StatusOr<std::vector<int32_t>> FindProcessesNamed(
    const std::string& procfs_root, absl::string_view comm) {
  absl::StatusOr<std::vector<std::string>> names = ListDirectory(procfs_root);
  if (!names.ok()) {
    return absl::Status(
        names.status().code(),
        absl::StrCat("looking for ", comm, ": ", names.status().message()));
  }
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
