#include "agent/host/kubelet.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "agent/host/file_util.h"
#include "policy/cpu_list.h"

namespace locus {
namespace {

// The kubelet's files are another program's state, read through the one
// bounded reader: a node's CPU manager state (one short entry a container)
// and its config stay far below this; a FIFO, a device or a huge file at
// either path is reported, never waited on or read whole.
constexpr size_t kMaxKubeletFileBytes = 1 << 20;

// The CPU manager's checkpoint: with the static policy, per pod UID the
// exclusive cpuset of each of its containers.
struct CpuManagerState {
  bool is_static = false;
  std::map<std::string, std::vector<std::vector<int>>> exclusive;
};

absl::StatusOr<CpuManagerState> ParseCpuManagerState(const std::string& json,
                                                     const std::string& path) {
  google::protobuf::Struct root;
  auto parsed = google::protobuf::util::JsonStringToMessage(json, &root);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not the kubelet's JSON: ", parsed.ToString()));
  }
  CpuManagerState state;
  const auto& fields = root.fields();
  auto policy = fields.find("policyName");
  state.is_static =
      policy != fields.end() && policy->second.string_value() == "static";
  auto entries = fields.find("entries");
  if (!state.is_static || entries == fields.end()) return state;
  for (const auto& [pod, containers] :
       entries->second.struct_value().fields()) {
    for (const auto& [name, cpus] : containers.struct_value().fields()) {
      absl::StatusOr<std::vector<int>> list = ParseCpuList(cpus.string_value());
      if (!list.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ": entries.", pod, ".", name, ": ", list.status().message()));
      }
      state.exclusive[pod].push_back(*std::move(list));
    }
  }
  return state;
}

// The kubelet config's topologyManagerPolicy ("" when unknown): a top-level
// scalar, read by line rather than with a YAML parser for one key.
std::string TopologyPolicy(const std::string& root) {
  absl::StatusOr<std::string> text =
      ReadTextFile(JoinPath(root, "config.yaml"), kMaxKubeletFileBytes);
  if (!text.ok()) return "";
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    if (!absl::ConsumePrefix(&line, "topologyManagerPolicy:")) continue;
    line = absl::StripAsciiWhitespace(line);
    if (line.size() >= 2 && (line.front() == '"' || line.front() == '\'')) {
      line = line.substr(1, line.size() - 2);
    }
    return std::string(line);
  }
  return "";
}

// Marks the targets whose container cpuset is its pod's exclusive set as
// placed by the kubelet. A cgroup's cpuset is shared by its targets: so is
// the marked copy.
void MarkPlaced(const CpuManagerState& state, const std::string& topology,
                std::vector<Target>& targets) {
  std::map<const CgroupCpuset*, std::shared_ptr<const CgroupCpuset>> marked;
  for (Target& target : targets) {
    if (!target.cgroup || target.cgroup->cpus.empty()) continue;
    const CgroupCpuset* cgroup = target.cgroup.get();
    if (auto known = marked.find(cgroup); known != marked.end()) {
      target.cgroup = known->second;
      continue;
    }
    auto pod = state.exclusive.find(PodUidOfCgroup(cgroup->path));
    // Its own container's cpuset, not merely a pod with exclusive CPUs (a
    // sidecar in the shared pool is not placed).
    if (pod == state.exclusive.end() ||
        std::find(pod->second.begin(), pod->second.end(), cgroup->cpus) ==
            pod->second.end()) {
      continue;
    }
    auto placed = std::make_shared<CgroupCpuset>(*cgroup);
    placed->placed_by = absl::StrCat(
        "the kubelet: static CPU manager, exclusive cpus ",
        FormatCpuList(cgroup->cpus),
        topology == "single-numa-node" ? ", Topology Manager single-numa-node"
                                       : "");
    marked[cgroup] = placed;
    target.cgroup = std::move(placed);
  }
}

}  // namespace

std::string PodUidOfCgroup(absl::string_view cgroup_path) {
  bool in_pods = false;
  for (absl::string_view part :
       absl::StrSplit(cgroup_path, '/', absl::SkipEmpty())) {
    if (absl::StartsWith(part, "kubepods")) in_pods = true;
    if (!in_pods) continue;
    // cgroupfs: "pod<uid>"; systemd: "kubepods[-<qos>]-pod<uid_>.slice".
    size_t at = absl::StartsWith(part, "pod") ? 0 : part.find("-pod");
    if (at == absl::string_view::npos) continue;
    absl::string_view uid = part.substr(at == 0 ? 3 : at + 4);
    absl::ConsumeSuffix(&uid, ".slice");
    if (uid.empty()) continue;
    return absl::StrReplaceAll(uid, {{"_", "-"}});
  }
  return "";
}

void KubeletWatch::Fill(std::vector<Target>& targets,
                        std::vector<std::string>* errors) {
  const bool any_pod =
      std::any_of(targets.begin(), targets.end(), [](const Target& t) {
        return t.cgroup && !PodUidOfCgroup(t.cgroup->path).empty();
      });
  if (!any_pod) return;
  const std::string path = JoinPath(root_, "cpu_manager_state");
  absl::StatusOr<std::string> text = ReadTextFile(path, kMaxKubeletFileBytes);
  if (!text.ok()) {
    if (!absl::IsNotFound(text.status())) {
      errors->push_back(std::string(text.status().message()));
    }
    return;
  }
  absl::StatusOr<CpuManagerState> state = ParseCpuManagerState(*text, path);
  if (!state.ok()) {
    errors->push_back(std::string(state.status().message()));
    return;
  }
  if (!state->is_static) return;
  MarkPlaced(*state, TopologyPolicy(root_), targets);
}

}  // namespace locus
