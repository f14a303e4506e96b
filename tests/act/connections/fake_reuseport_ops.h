// In-memory stand-ins for connection steering's kernel calls and journal,
// for tests of agent/act/connections/connection_steering.h without root. The
// fake kernel knows sockets by (pid, fd) -> inode and inodes by reuseport
// group; duplicates are real file descriptors (memfds: each its own inode), so
// a duplicate left open is seen as it would be in production: OpenDuplicates()
// counts them.
#ifndef LOCUS_TESTS_ACT_CONNECTIONS_FAKE_REUSEPORT_OPS_H_
#define LOCUS_TESTS_ACT_CONNECTIONS_FAKE_REUSEPORT_OPS_H_

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/act/connections/connection_steering.h"
#include "agent/act/connections/reuseport_ops.h"

namespace locus {

// What one loaded program holds; kept by the fake after the program is
// destroyed, so tests can look at it.
struct FakeProgramState {
  int id = 0;
  bool migrates = true;
  bool destroyed = false;
  std::map<uint32_t, uint64_t> slots;  // slot -> socket inode
  std::vector<int> node_of_cpu;
  std::vector<ReuseportNode> nodes;
  int cpu_writes = 0;
  int node_writes = 0;
  ReuseportArms arms;
  int arm_writes = 0;
  ReuseportCounters counters;
};

class FakeReuseportOps : public ReuseportOps {
 public:
  ReuseportLimits limits{8, 4, 4, 1000};
  std::map<std::pair<int32_t, int>, uint64_t> sockets;  // (pid, fd) -> inode
  std::map<uint64_t, int> group_of;                     // inode -> group
  std::map<int, int> attached;         // group -> program id attached
  std::map<uint64_t, int> dup_errors;  // inode -> errno of Duplicate
  absl::Status load_error;
  bool migrates = true;
  int attach_error = 0;
  std::vector<std::shared_ptr<FakeProgramState>> programs;
  std::vector<std::string> events;  // "load 1", "attach group 0 program 1"...

  void AddSocket(int32_t pid, int fd, uint64_t inode, int group) {
    sockets[{pid, fd}] = inode;
    group_of[inode] = group;
  }

  // Duplicates handed out and still open.
  int OpenDuplicates() const {
    int open = 0;
    for (const auto& [fd, ino] : issued_) {
      struct stat st;
      if (fstat(fd, &st) == 0 && st.st_ino == ino) ++open;
    }
    return open;
  }

  ReuseportLimits Limits() const override { return limits; }

  absl::StatusOr<std::unique_ptr<ReuseportProgram>> Load() override;

  int Duplicate(int32_t pid, int fd, uint64_t inode, UniqueFd* out) override {
    auto it = sockets.find({pid, fd});
    if (it == sockets.end()) return EBADF;
    if (it->second != inode) return ESTALE;
    if (auto err = dup_errors.find(inode); err != dup_errors.end()) {
      return err->second;
    }
    UniqueFd dup(memfd_create("fake-socket-dup", MFD_CLOEXEC));
    struct stat st;
    if (!dup.valid() || fstat(dup.get(), &st) != 0) return errno;
    issued_[dup.get()] = st.st_ino;
    dup_inode_[dup.get()] = inode;
    *out = std::move(dup);
    return 0;
  }

  int Detach(int socket_fd) override {
    uint64_t inode = 0;
    if (int err = InodeOf(socket_fd, &inode); err != 0) return err;
    int group = group_of[inode];
    if (!attached.erase(group)) return ENOENT;
    events.push_back(absl::StrCat("detach group ", group));
    return 0;
  }

  // The socket inode a duplicate stands for; EBADF for a closed one.
  int InodeOf(int fd, uint64_t* inode) const {
    auto it = issued_.find(fd);
    struct stat st;
    if (it == issued_.end() || fstat(fd, &st) != 0 || st.st_ino != it->second) {
      return EBADF;
    }
    *inode = dup_inode_.at(fd);
    return 0;
  }

 private:
  std::map<int, ino_t> issued_;        // fd -> the memfd's inode
  std::map<int, uint64_t> dup_inode_;  // fd -> socket inode
};

class FakeReuseportProgram : public ReuseportProgram {
 public:
  FakeReuseportProgram(FakeReuseportOps* ops,
                       std::shared_ptr<FakeProgramState> state)
      : ops_(ops), state_(std::move(state)) {}
  ~FakeReuseportProgram() override { state_->destroyed = true; }

  bool migrates() const override { return state_->migrates; }
  int SetSocket(uint32_t slot, int socket_fd) override {
    uint64_t inode = 0;
    if (int err = ops_->InodeOf(socket_fd, &inode); err != 0) return err;
    if (slot >= ops_->limits.max_sockets) return E2BIG;
    for (const auto& program : ops_->programs) {
      for (const auto& [s, in] : program->slots) {
        if (in == inode && !program->destroyed) return EBUSY;
      }
    }
    state_->slots[slot] = inode;
    return 0;
  }
  int ClearSlot(uint32_t slot) override {
    state_->slots.erase(slot);
    return 0;
  }
  int SetCpuNodes(const std::vector<int>& node_of_cpu) override {
    ++state_->cpu_writes;
    state_->node_of_cpu = node_of_cpu;
    return 0;
  }
  int SetNodes(const std::vector<ReuseportNode>& nodes) override {
    ++state_->node_writes;
    state_->nodes = nodes;
    return 0;
  }
  int SetArms(const ReuseportArms& arms) override {
    // As the real rows: no more slots than a node row holds.
    if (arms.control.size() > ops_->limits.node_slots ||
        arms.treated.size() > ops_->limits.node_slots) {
      return E2BIG;
    }
    ++state_->arm_writes;
    state_->arms = arms;
    return 0;
  }
  int AttachThrough(int socket_fd) override {
    uint64_t inode = 0;
    if (int err = ops_->InodeOf(socket_fd, &inode); err != 0) return err;
    if (ops_->attach_error != 0) return ops_->attach_error;
    int group = ops_->group_of[inode];
    ops_->attached[group] = state_->id;
    ops_->events.push_back(
        absl::StrCat("attach group ", group, " program ", state_->id));
    return 0;
  }
  int ReadCounters(ReuseportCounters* counters) override {
    *counters = state_->counters;
    return 0;
  }

 private:
  FakeReuseportOps* ops_;
  std::shared_ptr<FakeProgramState> state_;
};

inline absl::StatusOr<std::unique_ptr<ReuseportProgram>>
FakeReuseportOps::Load() {
  if (!load_error.ok()) return load_error;
  auto state = std::make_shared<FakeProgramState>();
  state->id = programs.size() + 1;
  state->migrates = migrates;
  programs.push_back(state);
  events.push_back(absl::StrCat("load ", state->id));
  return std::make_unique<FakeReuseportProgram>(this, state);
}

// Journal records by key; each write is logged in the ops' events so tests
// see it in order with the attaches ("journal 80", "forget 80": the port).
class FakeSteeringJournal : public SteeringJournal {
 public:
  explicit FakeSteeringJournal(std::vector<std::string>* events)
      : events_(events) {}
  std::set<ListenKey> records;
  absl::Status record_error;

  absl::Status RecordAttach(const ListenKey& key) override {
    if (!record_error.ok()) return record_error;
    records.insert(key);
    events_->push_back(absl::StrCat("journal ", key.address.port));
    return absl::OkStatus();
  }
  absl::Status ForgetAttach(const ListenKey& key) override {
    records.erase(key);
    events_->push_back(absl::StrCat("forget ", key.address.port));
    return absl::OkStatus();
  }

 private:
  std::vector<std::string>* events_;
};

}  // namespace locus

#endif  // LOCUS_TESTS_ACT_CONNECTIONS_FAKE_REUSEPORT_OPS_H_
