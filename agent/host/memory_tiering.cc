#include "agent/host/memory_tiering.h"

#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/host/file_util.h"
#include "common/printable.h"

namespace locus {
namespace {

void Report(std::vector<std::string>* errors, const absl::Status& status) {
  errors->push_back(std::string(status.message()));
}

absl::Status RequireDirectory(absl::string_view root) {
  struct stat st {};
  const std::string path(root);
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::NotFoundError(absl::StrCat(path, ": not a directory"));
  }
  return absl::OkStatus();
}

// A file that is absent means the kernel lacks the feature: nullopt with no
// error. Any other failure is reported.
std::optional<std::string> ReadOptionalLine(const std::string& path,
                                            std::vector<std::string>* errors) {
  absl::StatusOr<std::string> text = ReadTextFile(path);
  if (!text.ok()) {
    if (!absl::IsNotFound(text.status())) Report(errors, text.status());
    return std::nullopt;
  }
  return std::string(absl::StripAsciiWhitespace(*text));
}

int ReadDemotionEnabled(absl::string_view sysfs_root,
                        std::vector<std::string>* errors) {
  const std::string path =
      JoinPath(sysfs_root, "kernel/mm/numa/demotion_enabled");
  std::optional<std::string> text = ReadOptionalLine(path, errors);
  if (!text) return -1;
  // The kernel writes "true"/"false" and accepts kstrtobool's spellings.
  if (*text == "true" || *text == "1") return 1;
  if (*text == "false" || *text == "0") return 0;
  errors->push_back(absl::StrCat(path, ": expected true or false, read '",
                                 Printable(*text), "'"));
  return -1;
}

// The numeric entries of a DAMON sysfs directory (kdamonds/0, contexts/0,
// schemes/1), ascending; the nr_* files beside them are skipped.
std::vector<int> NumberedDirs(const std::string& dir,
                              std::vector<std::string>* errors) {
  absl::StatusOr<std::vector<std::string>> names = ListDirectory(dir);
  std::vector<int> out;
  if (!names.ok()) {
    if (!absl::IsNotFound(names.status())) Report(errors, names.status());
    return out;
  }
  for (const std::string& name : *names) {
    int n = 0;
    if (absl::SimpleAtoi(name, &n) && n >= 0 && absl::StrCat(n) == name) {
      out.push_back(n);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// One scheme's "kdamond K scheme S: migrate_cold to node N", or nothing
// when its action moves no pages between nodes.
std::optional<std::string> DescribeScheme(const std::string& dir, int kdamond,
                                          int context, int scheme,
                                          std::vector<std::string>* errors) {
  std::optional<std::string> action =
      ReadOptionalLine(JoinPath(dir, "action"), errors);
  if (!action || (*action != "migrate_hot" && *action != "migrate_cold")) {
    return std::nullopt;
  }
  // The context is named only where a kdamond has several (it rarely does).
  std::string who = absl::StrCat(
      "kdamond ", kdamond,
      context > 0 ? absl::StrCat(" context ", context) : std::string(),
      " scheme ", scheme, ": ", *action);
  const std::string nid_path = JoinPath(dir, "target_nid");
  std::optional<std::string> nid = ReadOptionalLine(nid_path, errors);
  int node = 0;
  if (!nid) return absl::StrCat(who, " to an unknown node");
  if (!absl::SimpleAtoi(*nid, &node)) {
    errors->push_back(
        absl::StrCat(nid_path, ": not a node number: '", Printable(*nid), "'"));
    return absl::StrCat(who, " to an unknown node");
  }
  return absl::StrCat(who, " to node ", node);
}

std::vector<std::string> ReadDamonMigrations(absl::string_view sysfs_root,
                                             std::vector<std::string>* errors) {
  std::vector<std::string> out;
  const std::string kdamonds =
      JoinPath(sysfs_root, "kernel/mm/damon/admin/kdamonds");
  for (int k : NumberedDirs(kdamonds, errors)) {
    const std::string kdamond = JoinPath(kdamonds, absl::StrCat(k));
    // A kdamond that is off moves nothing, whatever its schemes say.
    std::optional<std::string> state =
        ReadOptionalLine(JoinPath(kdamond, "state"), errors);
    if (!state || *state != "on") continue;
    const std::string contexts = JoinPath(kdamond, "contexts");
    for (int c : NumberedDirs(contexts, errors)) {
      const std::string schemes =
          JoinPath(JoinPath(contexts, absl::StrCat(c)), "schemes");
      for (int s : NumberedDirs(schemes, errors)) {
        std::optional<std::string> described =
            DescribeScheme(JoinPath(schemes, absl::StrCat(s)), k, c, s, errors);
        if (described) out.push_back(*std::move(described));
      }
    }
  }
  return out;
}

// pgpromote_success, and the sum of the pgdemote_* counters of the three
// paths that demote (kswapd, direct reclaim, khugepaged's collapse). A
// counter the kernel does not have leaves its total -1; a malformed value
// of one it has leaves the total unknown rather than short.
void ReadVmstat(absl::string_view procfs_root, MemoryTiering* tiering,
                std::vector<std::string>* errors) {
  const std::string path = JoinPath(procfs_root, "vmstat");
  absl::StatusOr<std::string> text = ReadTextFile(path);
  if (!text.ok()) {
    if (!absl::IsNotFound(text.status())) Report(errors, text.status());
    return;
  }
  bool demoted_bad = false;
  bool promoted_bad = false;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() != 2) continue;
    const absl::string_view key = fields[0];
    const bool promote = key == "pgpromote_success";
    const bool demote = key == "pgdemote_kswapd" || key == "pgdemote_direct" ||
                        key == "pgdemote_khugepaged";
    if (!promote && !demote) continue;
    int64_t value = 0;
    if (!absl::SimpleAtoi(fields[1], &value) || value < 0) {
      errors->push_back(
          absl::StrCat(path, ": bad value in line '", Printable(line), "'"));
      (promote ? promoted_bad : demoted_bad) = true;
      continue;
    }
    int64_t& total = promote ? tiering->promoted_total : tiering->demoted_total;
    total = (total < 0 ? 0 : total) + value;
  }
  if (promoted_bad) tiering->promoted_total = -1;
  if (demoted_bad) tiering->demoted_total = -1;
}

}  // namespace

absl::StatusOr<MemoryTiering> ReadMemoryTiering(
    absl::string_view sysfs_root, absl::string_view procfs_root,
    std::vector<std::string>* errors) {
  absl::Status status = RequireDirectory(sysfs_root);
  if (status.ok()) status = RequireDirectory(procfs_root);
  if (!status.ok()) return status;
  MemoryTiering tiering;
  tiering.demotion_enabled = ReadDemotionEnabled(sysfs_root, errors);
  tiering.damon_migrations = ReadDamonMigrations(sysfs_root, errors);
  ReadVmstat(procfs_root, &tiering, errors);
  return tiering;
}

}  // namespace locus
