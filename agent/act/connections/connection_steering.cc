#include "agent/act/connections/connection_steering.h"

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/act/connections/steering_arms.h"
#include "common/os_error.h"
#include "common/status_macros.h"

namespace locus {
namespace {

// The socket went away between discovery and now: the process exited
// (ESRCH), closed the fd (EBADF), or reused its number (ESTALE). Not a
// failure of steering: the next discovery lists what is there.
bool Gone(int err) { return err == ESRCH || err == EBADF || err == ESTALE; }

absl::Status DuplicateStatus(const GroupSocket& socket, int err) {
  std::string what = absl::StrCat("pidfd_getfd(pid ", socket.dup_pid, ", fd ",
                                  socket.dup_fd, ")");
  if (err == EPERM || err == EACCES) {
    absl::StrAppend(&what,
                    " (Yama ptrace_scope or an LSM forbids duplicating "
                    "nginx's sockets; the agent needs CAP_SYS_PTRACE)");
  }
  return ErrnoStatus(what, err);
}

std::set<uint64_t> Inodes(const ListenGroup& listed) {
  std::set<uint64_t> inodes;
  for (const GroupSocket& socket : listed.sockets) inodes.insert(socket.inode);
  return inodes;
}

// Re-created: none of the sockets it had is listed any more (nginx
// restarted), so its program went with them and the group needs a new one.
bool Recreated(const std::vector<GroupSocket>& before,
               const std::set<uint64_t>& now) {
  return std::none_of(before.begin(), before.end(),
                      [&](const GroupSocket& s) { return now.count(s.inode); });
}

void AddProblem(std::string& problems, absl::string_view problem) {
  absl::StrAppend(&problems, problems.empty() ? "" : "; ", problem);
}

absl::Status DetachThroughAny(ReuseportOps& ops, const ListenKey& key,
                              const std::vector<GroupSocket>& members) {
  for (const GroupSocket& member : members) {
    absl::Status status = DetachReuseportGroup(ops, key, member);
    if (!absl::IsNotFound(status)) return status;
  }
  return absl::NotFoundError(
      absl::StrCat(ListenKeyString(key),
                   ": no socket of the group is left to detach through"));
}

}  // namespace

std::string ListenKeyString(const ListenKey& key) {
  return absl::StrCat("netns ", key.netns, " ",
                      ListenAddressString(key.address));
}

absl::Status DetachReuseportGroup(ReuseportOps& ops, const ListenKey& key,
                                  const GroupSocket& member) {
  UniqueFd fd;
  int err = ops.Duplicate(member.dup_pid, member.dup_fd, member.inode, &fd);
  if (Gone(err)) {
    return absl::NotFoundError(absl::StrCat(
        ListenKeyString(key), ": socket inode ", member.inode, " is gone"));
  }
  if (err != 0) {
    absl::Status status = DuplicateStatus(member, err);
    return absl::Status(status.code(), absl::StrCat(ListenKeyString(key), ": ",
                                                    status.message()));
  }
  err = ops.Detach(fd.get());
  if (err != 0 && err != ENOENT) {
    return ErrnoStatus(
        absl::StrCat(ListenKeyString(key), ": SO_DETACH_REUSEPORT_BPF"), err);
  }
  return absl::OkStatus();
}

ConnectionSteering::ConnectionSteering(ReuseportOps* ops,
                                       SteeringJournal* journal)
    : ops_(ops), journal_(journal), limits_(ops->Limits()) {}

ConnectionSteering::~ConnectionSteering() = default;

void ConnectionSteering::Apply(const std::vector<ListenGroup>& groups,
                               const std::vector<int>& node_of_cpu,
                               const SteeringPlan& plan) {
  std::map<ListenKey, const ListenGroup*> listed;
  for (const ListenGroup& group : groups) listed[group.key] = &group;
  for (auto it = groups_.begin(); it != groups_.end();) {
    const ListenKey& key = it->first;
    Group& group = it->second;
    bool vanished = !listed.count(key);
    if (!vanished && plan.count(key)) {
      ++it;
      continue;
    }
    if (group.program && vanished) {
      // Its program went with its sockets: only the record is left.
      journal_->ForgetAttach(key).IgnoreError();
    } else if (group.program) {
      absl::Status released = Release(key, group);
      if (!released.ok()) {
        // Still attached: kept, to be detached by DetachAll or next time.
        group.status.problem = std::string(released.message());
        ++it;
        continue;
      }
    }
    it = groups_.erase(it);
  }
  for (const auto& [key, steering] : plan) {
    auto found = listed.find(key);
    if (found != listed.end()) Steer(*found->second, node_of_cpu, steering);
  }
}

void ConnectionSteering::Steer(const ListenGroup& listed,
                               const std::vector<int>& node_of_cpu,
                               const GroupSteering& steering) {
  std::set<uint64_t> inodes = Inodes(listed);
  auto it = groups_.find(listed.key);
  if (it != groups_.end() && it->second.program &&
      Recreated(it->second.members, inodes)) {
    journal_->ForgetAttach(listed.key).IgnoreError();
    groups_.erase(it);
    it = groups_.end();
  }
  if (it != groups_.end() && it->second.program) {
    Update(listed, node_of_cpu, steering, it->second);
    return;
  }
  // Down with the same sockets: trying again would fail the same way.
  if (it != groups_.end() && it->second.failed_inodes == inodes) return;
  groups_[listed.key] = Attach(listed, node_of_cpu, steering);
}

ConnectionSteering::Group ConnectionSteering::Attach(
    const ListenGroup& listed, const std::vector<int>& node_of_cpu,
    const GroupSteering& steering) {
  Group group;
  group.members = listed.sockets;
  absl::Status status = AttachNew(listed, node_of_cpu, steering, group);
  return status.ok() ? std::move(group) : Down(listed, status);
}

ConnectionSteering::Group ConnectionSteering::Down(const ListenGroup& listed,
                                                   const absl::Status& why) {
  Group down;
  down.members = listed.sockets;
  // Unavailable (EBUSY: a socket still in a freed array; every socket gone)
  // passes by itself: tried again next time, not only when sockets change.
  if (!absl::IsUnavailable(why)) down.failed_inodes = Inodes(listed);
  down.status.problem = std::string(why.message());
  return down;
}

absl::Status ConnectionSteering::AttachNew(const ListenGroup& listed,
                                           const std::vector<int>& node_of_cpu,
                                           const GroupSteering& steering,
                                           Group& group) {
  RETURN_IF_ERROR(ValidateSteering(steering));
  ASSIGN_OR_RETURN(group.program, ops_->Load());
  RETURN_IF_ERROR(WriteCpuNodes(node_of_cpu, group));
  UniqueFd member;  // closed on every return, like every duplicate
  RETURN_IF_ERROR(FillSlots(listed, group, &member));
  if (!member.valid()) {
    return absl::UnavailableError(
        "no socket of the group could be duplicated (all gone)");
  }
  RETURN_IF_ERROR(WriteNodes(steering, group));
  RETURN_IF_ERROR(WriteArms(steering, group));
  absl::Status journaled = journal_->RecordAttach(listed.key);
  if (!journaled.ok()) {
    return absl::Status(journaled.code(),
                        absl::StrCat("journal: ", journaled.message()));
  }
  int err = group.program->AttachThrough(member.get());
  if (err != 0) {
    journal_->ForgetAttach(listed.key).IgnoreError();
    return ErrnoStatus("SO_ATTACH_REUSEPORT_EBPF", err);
  }
  group.status.attached = true;
  group.status.migrates = group.program->migrates();
  return absl::OkStatus();
}

void ConnectionSteering::Update(const ListenGroup& listed,
                                const std::vector<int>& node_of_cpu,
                                const GroupSteering& steering, Group& group) {
  group.status.problem.clear();
  if (absl::Status valid = ValidateSteering(steering); !valid.ok()) {
    // A bad plan changes nothing: the group keeps its last good maps.
    group.status.problem = std::string(valid.message());
    return;
  }
  absl::Status status = UpdateMaps(listed, node_of_cpu, steering, group);
  group.members = listed.sockets;
  if (status.ok()) return;
  // Half-updated maps could steer to the wrong node: nothing is better.
  absl::Status released = Release(listed.key, group);
  Group down = Down(listed, status);
  if (!released.ok()) {
    AddProblem(down.status.problem, released.message());
    down.program = std::move(group.program);  // still attached
    down.status.attached = true;
  }
  group = std::move(down);
}

absl::Status ConnectionSteering::UpdateMaps(const ListenGroup& listed,
                                            const std::vector<int>& node_of_cpu,
                                            const GroupSteering& steering,
                                            Group& group) {
  std::set<uint64_t> inodes = Inodes(listed);
  for (auto it = group.slot_of.begin(); it != group.slot_of.end();) {
    if (inodes.count(it->first)) {
      ++it;
      continue;
    }
    // Usually emptied already (a closed socket leaves its slot).
    int err = group.program->ClearSlot(it->second);
    if (err != 0) {
      return ErrnoStatus(absl::StrCat("empty slot ", it->second), err);
    }
    it = group.slot_of.erase(it);
  }
  RETURN_IF_ERROR(FillSlots(listed, group, nullptr));
  RETURN_IF_ERROR(WriteCpuNodes(node_of_cpu, group));
  RETURN_IF_ERROR(WriteNodes(steering, group));
  return WriteArms(steering, group);
}

absl::Status ConnectionSteering::FillSlots(const ListenGroup& listed,
                                           Group& group, UniqueFd* member) {
  std::vector<bool> used(limits_.max_sockets);
  for (const auto& [inode, slot] : group.slot_of) used[slot] = true;
  uint32_t next = 0;
  for (const GroupSocket& socket : listed.sockets) {
    if (group.slot_of.count(socket.inode)) continue;
    UniqueFd dup;
    int err =
        ops_->Duplicate(socket.dup_pid, socket.dup_fd, socket.inode, &dup);
    if (Gone(err)) {
      AddProblem(group.status.problem,
                 absl::StrCat("socket inode ", socket.inode, " gone"));
      continue;
    }
    if (err != 0) return DuplicateStatus(socket, err);
    while (next < used.size() && used[next]) ++next;
    if (next == used.size()) {
      AddProblem(group.status.problem,
                 absl::StrCat("socket inode ", socket.inode, " beyond the ",
                              limits_.max_sockets, " slots"));
      continue;
    }
    err = group.program->SetSocket(next, dup.get());
    if (err != 0) {
      return ErrnoStatus(
          absl::StrCat("put socket inode ", socket.inode, " in slot ", next),
          err);
    }
    used[next] = true;
    group.slot_of[socket.inode] = next;
    if (member != nullptr && !member->valid()) *member = std::move(dup);
  }
  group.status.sockets = group.slot_of.size();
  return absl::OkStatus();
}

absl::Status ConnectionSteering::WriteCpuNodes(
    const std::vector<int>& node_of_cpu, Group& group) {
  if (group.status.attached && group.node_of_cpu == node_of_cpu) {
    return absl::OkStatus();
  }
  int err = group.program->SetCpuNodes(node_of_cpu);
  if (err != 0) return ErrnoStatus("fill the CPU->node map", err);
  group.node_of_cpu = node_of_cpu;
  return absl::OkStatus();
}

absl::Status ConnectionSteering::WriteNodes(const GroupSteering& steering,
                                            Group& group) {
  std::vector<ReuseportNode> nodes;
  if (!steering.nodes.empty()) nodes.resize(steering.nodes.rbegin()->first + 1);
  for (const auto& [node, sockets] : steering.nodes) {
    nodes[node].spill_permille = sockets.spill_permille;
    for (uint64_t inode : sockets.inodes) {
      auto slot = group.slot_of.find(inode);
      if (slot == group.slot_of.end()) {
        AddProblem(group.status.problem,
                   absl::StrCat("node ", node, ": socket inode ", inode,
                                " not in the socket array"));
        continue;
      }
      nodes[node].slots.push_back(slot->second);
    }
  }
  if (group.status.attached && nodes == group.nodes) {
    return absl::OkStatus();
  }
  int err = group.program->SetNodes(nodes);
  if (err != 0) return ErrnoStatus("fill the node table", err);
  group.nodes = std::move(nodes);
  return absl::OkStatus();
}

absl::Status ConnectionSteering::WriteArms(const GroupSteering& steering,
                                           Group& group) {
  ReuseportArms arms =
      ArmsOf(steering, group.slot_of, limits_, &group.status.problem);
  // A new program's rows are empty: only an experiment's need writing.
  const ReuseportArms& written =
      group.status.attached ? group.arms : ReuseportArms{};
  if (arms == written) return absl::OkStatus();
  int err = group.program->SetArms(arms);
  if (err != 0) return ErrnoStatus("fill the experiment's arms", err);
  group.arms = std::move(arms);
  return absl::OkStatus();
}

absl::Status ConnectionSteering::ValidateSteering(
    const GroupSteering& steering) const {
  RETURN_IF_ERROR(ValidateArms(steering));
  for (const auto& [node, sockets] : steering.nodes) {
    if (node < 0 || static_cast<uint32_t>(node) >= limits_.max_nodes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "plan: node ", node, " outside 0..", limits_.max_nodes - 1));
    }
    if (sockets.inodes.size() > limits_.node_slots) {
      return absl::InvalidArgumentError(
          absl::StrCat("plan: node ", node, " lists ", sockets.inodes.size(),
                       " sockets, at most ", limits_.node_slots));
    }
    if (sockets.spill_permille > limits_.spill_scale) {
      return absl::InvalidArgumentError(
          absl::StrCat("plan: node ", node, " spills ", sockets.spill_permille,
                       "/", limits_.spill_scale));
    }
  }
  return absl::OkStatus();
}

absl::Status ConnectionSteering::Release(const ListenKey& key,
                                         const Group& group) {
  RETURN_IF_ERROR(DetachThroughAny(*ops_, key, group.members));
  return journal_->ForgetAttach(key);
}

absl::Status ConnectionSteering::DetachAll() {
  std::vector<std::string> failed;
  for (auto& [key, group] : groups_) {
    if (!group.program) continue;
    absl::Status status = Release(key, group);
    if (!status.ok()) failed.push_back(std::string(status.message()));
  }
  groups_.clear();
  if (failed.empty()) return absl::OkStatus();
  return absl::UnavailableError(
      absl::StrCat("left attached: ", absl::StrJoin(failed, "; ")));
}

std::map<ListenKey, SteeringGroupStatus> ConnectionSteering::status() const {
  std::map<ListenKey, SteeringGroupStatus> out;
  for (const auto& [key, group] : groups_) out[key] = group.status;
  return out;
}

absl::StatusOr<ReuseportCounters> ConnectionSteering::Counters(
    const ListenKey& key) const {
  auto it = groups_.find(key);
  if (it == groups_.end() || !it->second.status.attached) {
    return absl::NotFoundError(
        absl::StrCat(ListenKeyString(key), ": not steered"));
  }
  ReuseportCounters counters;
  int err = it->second.program->ReadCounters(&counters);
  if (err != 0) return ErrnoStatus("read the steering counters", err);
  return counters;
}

}  // namespace locus
