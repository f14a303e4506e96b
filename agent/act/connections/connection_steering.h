// Connection steering: per reuseport group of nginx's listening sockets, one
// instance of bpf/reuseport.bpf.c, its socket array filled with the group's
// sockets (duplicated from nginx through pidfd_getfd and closed again at
// once) and its node table with the sockets of the workers homed on each
// node, attached once through one member. The kernel then sends each new
// connection to a worker of the node whose CPU handled its SYN.
//
// Attach and detach are rare: later calls only update the maps as workers
// move or come and go. A group is attached again only when it was re-created
// (every socket new: nginx restarted). Every attach is journaled before it is
// made, so SIGTERM (DetachAll), `locusctl restore` and `locusd --restore`
// after a crash (DetachReuseportGroup) take it away again. A group that
// cannot be steered (pidfd_getfd refused by Yama or an LSM, no sk_reuseport
// support, a journal that cannot be written) is left unattached and says why
// in its status; it is tried again when its sockets change.
#ifndef LOCUS_AGENT_ACT_CONNECTIONS_CONNECTION_STEERING_H_
#define LOCUS_AGENT_ACT_CONNECTIONS_CONNECTION_STEERING_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/act/connections/reuseport_ops.h"
#include "agent/host/listeners.h"

namespace locus {

// Where steering attaches are journaled (the undo journal implements it).
class SteeringJournal {
 public:
  virtual ~SteeringJournal() = default;
  virtual absl::Status RecordAttach(const ListenKey& key) = 0;
  virtual absl::Status ForgetAttach(const ListenKey& key) = 0;
};

// The sockets (by inode) steered to one node, and the share of the node's
// new connections left to the kernel's hash (per mille).
struct NodeSockets {
  std::vector<uint64_t> inodes;
  uint32_t spill_permille = 0;
};
// What one group should look like: by node, and during an experiment the
// control arm's sockets (their share by hash, the nodes' sockets the rest).
struct GroupSteering {
  std::map<int, NodeSockets> nodes;
  std::vector<uint64_t> control;
};
// Groups to steer; a listed group absent here is left (or made) unattached.
using SteeringPlan = std::map<ListenKey, GroupSteering>;

struct SteeringGroupStatus {
  bool attached = false;
  bool migrates = false;  // SELECT_OR_MIGRATE program (5.14+)
  size_t sockets = 0;     // in the socket array
  // Unattached: why. Attached: what it had to leave out, if anything
  // ("socket inode 12 gone before it could be duplicated").
  std::string problem;
};

// "netns 4026531840 127.0.0.1:80".
std::string ListenKeyString(const ListenKey& key);

class ConnectionSteering {
 public:
  // Borrows both; they outlive it.
  ConnectionSteering(ReuseportOps* ops, SteeringJournal* journal);
  ConnectionSteering(const ConnectionSteering&) = delete;
  ConnectionSteering& operator=(const ConnectionSteering&) = delete;
  // Leaves attached programs attached (they outlive the agent by design);
  // call DetachAll to take them away.
  ~ConnectionSteering();

  // `groups` as discovery listed them; node_of_cpu[cpu] is the CPU's node
  // (-1: none known). Never fails as a whole: each group's outcome is in
  // status().
  void Apply(const std::vector<ListenGroup>& groups,
             const std::vector<int>& node_of_cpu, const SteeringPlan& plan);

  // Detaches every attached group through a current member and forgets its
  // journal record; a group it could not detach keeps its record (for
  // `locusd --restore`) and is named in the error.
  absl::Status DetachAll();

  // Groups steered, and groups down with why.
  std::map<ListenKey, SteeringGroupStatus> status() const;

  // The program's counters of an attached group.
  absl::StatusOr<ReuseportCounters> Counters(const ListenKey& key) const;

 private:
  struct Group {
    std::unique_ptr<ReuseportProgram> program;  // null: down
    std::vector<GroupSocket> members;           // as last listed
    std::map<uint64_t, uint32_t> slot_of;       // inode -> slot
    std::vector<int> node_of_cpu;               // as last written
    std::vector<ReuseportNode> nodes;           // as last written
    ReuseportArms arms;                         // as last written
    std::set<uint64_t> failed_inodes;           // down: the sockets it failed
    SteeringGroupStatus status;
  };

  void Steer(const ListenGroup& listed, const std::vector<int>& node_of_cpu,
             const GroupSteering& steering);
  Group Attach(const ListenGroup& listed, const std::vector<int>& node_of_cpu,
               const GroupSteering& steering);
  static Group Down(const ListenGroup& listed, const absl::Status& why);
  absl::Status AttachNew(const ListenGroup& listed,
                         const std::vector<int>& node_of_cpu,
                         const GroupSteering& steering, Group& group);
  void Update(const ListenGroup& listed, const std::vector<int>& node_of_cpu,
              const GroupSteering& steering, Group& group);
  absl::Status UpdateMaps(const ListenGroup& listed,
                          const std::vector<int>& node_of_cpu,
                          const GroupSteering& steering, Group& group);
  absl::Status FillSlots(const ListenGroup& listed, Group& group,
                         UniqueFd* member);
  absl::Status WriteCpuNodes(const std::vector<int>& node_of_cpu, Group& group);
  absl::Status WriteNodes(const GroupSteering& steering, Group& group);
  absl::Status WriteArms(const GroupSteering& steering, Group& group);
  absl::Status ValidateSteering(const GroupSteering& steering) const;
  // Detaches an attached group and forgets its journal record.
  absl::Status Release(const ListenKey& key, const Group& group);

  ReuseportOps* ops_;
  SteeringJournal* journal_;
  ReuseportLimits limits_;
  std::map<ListenKey, Group> groups_;
};

// Detaches whatever sk_reuseport program the group `key` has, through its
// socket `member` (duplicated from member.dup_pid, member.dup_fd, and closed
// again): for `locusd --restore` after a crash, with only the journal's key
// and a fresh discovery. None attached is no error; NotFound when the member
// is gone (try another).
absl::Status DetachReuseportGroup(ReuseportOps& ops, const ListenKey& key,
                                  const GroupSocket& member);

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_CONNECTIONS_CONNECTION_STEERING_H_
