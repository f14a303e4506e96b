// The sysfs topology files (node*/cpulist, meminfo, distance; cpu/online,
// present) as ReadTopology reads them, from a scratch tree written per
// input. Input: files in the form
//
//   == node0/cpulist
//   0-3
//   == cpu/online
//   0-7
//
// Names other than those files are ignored, so the tree stays small.
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/host/topology.h"
#include "fuzz_check.h"
#include "tests/host/temp_tree.h"

namespace {

constexpr size_t kMaxFiles = 64;

bool NodeDirName(absl::string_view name) {
  if (!absl::StartsWith(name, "node") || name.size() > 12) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '+' && c != '-' && c != '_') {
      return false;
    }
  }
  return true;
}

// The path under sys/devices/system/ for a file name of the input, or "".
std::string SysfsPath(absl::string_view name) {
  std::pair<absl::string_view, absl::string_view> parts =
      absl::StrSplit(name, absl::MaxSplits('/', 1));
  static const std::set<absl::string_view> kCpuFiles = {"online", "present"};
  static const std::set<absl::string_view> kNodeFiles = {"cpulist", "meminfo",
                                                         "distance"};
  if (parts.first == "cpu" && kCpuFiles.count(parts.second)) {
    return std::string(name);
  }
  if (NodeDirName(parts.first) && kNodeFiles.count(parts.second)) {
    return "node/" + std::string(name);
  }
  return "";
}

}  // namespace

// Scratch trees on tmpfs where there is one: several times the executions
// per second of a disk-backed /tmp.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (access("/dev/shm", W_OK) == 0) setenv("TMPDIR", "/dev/shm", 0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::map<std::string, std::string> files;
  std::string* current = nullptr;
  for (absl::string_view line :
       absl::StrSplit(locus::fuzz::AsText(data, size), '\n')) {
    if (absl::ConsumePrefix(&line, "== ")) {
      std::string path = SysfsPath(line);
      current =
          path.empty() || files.size() >= kMaxFiles ? nullptr : &files[path];
      if (current) current->clear();
      continue;
    }
    if (current) absl::StrAppend(current, line, "\n");
  }
  locus::TempTree tree;
  LOCUS_FUZZ_CHECK(!tree.root().empty());
  // The node directory must exist even when the input names no node.
  tree.Write("sys/devices/system/node/has_cpu", "");
  for (const auto& [path, content] : files) {
    tree.Write("sys/devices/system/" + path, content);
  }

  std::vector<std::string> errors;
  absl::StatusOr<locus::Topology> topology =
      locus::ReadTopology(tree.root() + "/sys", &errors);
  if (!topology.ok()) return 0;
  const size_t count = topology->nodes.size();
  for (size_t i = 0; i < count; ++i) {
    const locus::Node& node = topology->nodes[i];
    LOCUS_FUZZ_CHECK(i == 0 || topology->nodes[i - 1].id < node.id);
    LOCUS_FUZZ_CHECK(node.distances.size() == count);
    LOCUS_FUZZ_CHECK(locus::fuzz::StrictlyAscending(node.cpus));
    for (int cpu : node.cpus) {
      LOCUS_FUZZ_CHECK(locus::NodeOfCpu(*topology, cpu) == node.id);
    }
  }
  return 0;
}
