// The kernel calls connection steering makes, behind small interfaces so
// that the logic above them (agent/act/connections/connection_steering.h:
// journal first, duplicates always closed, update rather than re-attach) is
// tested without root through fakes
// (tests/act/connections/fake_reuseport_ops.h). The real ones
// (agent/act/connections/reuseport_kernel.h) are the only code of locus_act
// that sees libbpf or the skeleton of bpf/reuseport.bpf.c.
//
// Methods return 0 or an errno value: the errno *is* the outcome (EPERM:
// Yama or an LSM refuses pidfd_getfd, ESRCH: the process is gone, EBADF: the
// fd is closed, ESTALE: the fd now names another file, EBUSY: the socket
// already sits in a socket array).
#ifndef LOCUS_AGENT_ACT_CONNECTIONS_REUSEPORT_OPS_H_
#define LOCUS_AGENT_ACT_CONNECTIONS_REUSEPORT_OPS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "common/unique_fd.h"

namespace locus {

// The bounds of the program's maps (bpf/include/locus/reuseport.h), so the
// logic checks a plan against them without the BPF headers.
struct ReuseportLimits {
  uint32_t max_sockets = 0;  // slots of a group's socket array
  uint32_t max_nodes = 0;    // rows of the node table
  uint32_t node_slots = 0;   // sockets one node may list
  uint32_t spill_scale = 0;  // spill_permille is out of this many
};

// One row of the node table: the slots of the sockets of the workers homed
// on the node, and the share of its new connections left to the kernel's
// hash.
struct ReuseportNode {
  std::vector<uint32_t> slots;
  uint32_t spill_permille = 0;
  bool operator==(const ReuseportNode&) const = default;
};

// What happened to the new connections of one node (see
// locus_reuseport_path), summed over CPUs.
struct ReuseportPathCounts {
  uint64_t local = 0;
  uint64_t spilled = 0;
  uint64_t fallback = 0;
  uint64_t migrated = 0;
  uint64_t control = 0;  // an experiment's control arm, by hash
  bool operator==(const ReuseportPathCounts&) const = default;
};

// The control arm's share is out of this many (LOCUS_REUSEPORT_ARM_SCALE,
// static_asserted where the program is loaded).
inline constexpr uint32_t kReuseportArmScale = 1000000;

// An experiment's arms (locus/reuseport.h): the control sockets' slots and
// the share of new connections they take (out of kReuseportArmScale), and
// every treated socket's slot, among which what is not steered by node is
// spread. Empty: no experiment.
struct ReuseportArms {
  std::vector<uint32_t> control;
  std::vector<uint32_t> treated;
  uint32_t control_share = 0;
  bool operator==(const ReuseportArms&) const = default;
};

struct ReuseportCounters {
  std::map<int, ReuseportPathCounts> nodes;  // rows with any count
  ReuseportPathCounts no_node;               // CPUs of no known node
};

// One loaded instance of bpf/reuseport.bpf.c: its own socket array, so one
// per reuseport group. Unloading it (destruction) leaves an attached program
// in place: the kernel keeps it as long as the group's sockets live.
class ReuseportProgram {
 public:
  virtual ~ReuseportProgram() = default;
  // Whether this is the SELECT_OR_MIGRATE program (5.14+): requests queued
  // on a closing listener go to another socket instead of being reset.
  virtual bool migrates() const = 0;
  // Puts the socket `socket_fd` names in `slot` (a socket fits in one slot
  // of one array: EBUSY for a second).
  virtual int SetSocket(uint32_t slot, int socket_fd) = 0;
  // Empties `slot`; an empty slot is no error.
  virtual int ClearSlot(uint32_t slot) = 0;
  // node_of_cpu[cpu]: its node, or -1; CPUs beyond it are of no known node.
  virtual int SetCpuNodes(const std::vector<int>& node_of_cpu) = 0;
  // nodes[node]; the rows beyond it are emptied.
  virtual int SetNodes(const std::vector<ReuseportNode>& nodes) = 0;
  virtual int SetArms(const ReuseportArms& arms) = 0;
  // SO_ATTACH_REUSEPORT_EBPF through `socket_fd`: for its whole group.
  virtual int AttachThrough(int socket_fd) = 0;
  virtual int ReadCounters(ReuseportCounters* counters) = 0;
};

class ReuseportOps {
 public:
  virtual ~ReuseportOps() = default;
  virtual ReuseportLimits Limits() const = 0;
  // A new program instance; fails (with why) where the kernel lacks
  // sk_reuseport programs or the agent may not load BPF.
  virtual absl::StatusOr<std::unique_ptr<ReuseportProgram>> Load() = 0;
  // The socket `fd` of process `pid` is, duplicated into the agent
  // (pidfd_open + pidfd_getfd) into `out`, provided it is still the socket
  // of inode `inode` (ESTALE otherwise: the number was reused).
  virtual int Duplicate(int32_t pid, int fd, uint64_t inode, UniqueFd* out) = 0;
  // SO_DETACH_REUSEPORT_BPF through `socket_fd` (ENOENT: none attached).
  virtual int Detach(int socket_fd) = 0;
};

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_CONNECTIONS_REUSEPORT_OPS_H_
