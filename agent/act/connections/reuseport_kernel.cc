#include "agent/act/connections/reuseport_kernel.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bpf/bpf.h"
#include "bpf/libbpf.h"
#include "common/os_error.h"
#include "locus/limits.h"
#include "locus/reuseport.h"
#include "reuseport.skel.h"

namespace locus {
namespace {

// The node table the program reads: no padding the two sides could disagree
// on.
static_assert(sizeof(locus_reuseport_node) ==
              sizeof(__u32) * (2 + LOCUS_REUSEPORT_NODE_SLOTS));

// The arms' share and the counters' paths, as ReuseportArms and
// ReuseportPathCounts (agent/act/connections/reuseport_ops.h) hold them.
static_assert(LOCUS_REUSEPORT_ARM_SCALE == kReuseportArmScale);
static_assert(LOCUS_REUSEPORT_NR_ARMS == 2);
static_assert(LOCUS_REUSEPORT_NR_PATHS == 5 &&
              LOCUS_REUSEPORT_CONTROL == LOCUS_REUSEPORT_NR_PATHS - 1);

// Where a CPU of no known node points: the counter row kept for them.
constexpr uint32_t kNoNode = LOCUS_MAX_NODES;

// Owns a loaded skeleton; destroying it unloads the program, which stays
// attached (the kernel holds it) when it was.
class KernelProgram : public ReuseportProgram {
 public:
  KernelProgram(reuseport_bpf* skel, bool migrates)
      : skel_(skel), migrates_(migrates) {}
  ~KernelProgram() override { reuseport_bpf__destroy(skel_); }

  bool migrates() const override { return migrates_; }

  int SetSocket(uint32_t slot, int socket_fd) override {
    uint64_t fd = socket_fd;
    return -bpf_map__update_elem(skel_->maps.socks, &slot, sizeof(slot), &fd,
                                 sizeof(fd), BPF_ANY);
  }

  int ClearSlot(uint32_t slot) override {
    int err = -bpf_map__delete_elem(skel_->maps.socks, &slot, sizeof(slot), 0);
    return err == ENOENT ? 0 : err;
  }

  int SetCpuNodes(const std::vector<int>& node_of_cpu) override {
    std::vector<uint32_t> keys(LOCUS_MAX_CPUS), values(LOCUS_MAX_CPUS, kNoNode);
    for (uint32_t cpu = 0; cpu < LOCUS_MAX_CPUS; ++cpu) {
      keys[cpu] = cpu;
      if (cpu < node_of_cpu.size() && node_of_cpu[cpu] >= 0 &&
          node_of_cpu[cpu] < LOCUS_MAX_NODES) {
        values[cpu] = node_of_cpu[cpu];
      }
    }
    return UpdateAll(skel_->maps.cpu_node, keys.data(), values.data(),
                     keys.size());
  }

  int SetNodes(const std::vector<ReuseportNode>& nodes) override {
    if (nodes.size() > LOCUS_MAX_NODES) return E2BIG;
    std::vector<uint32_t> keys(LOCUS_MAX_NODES);
    std::vector<locus_reuseport_node> values(LOCUS_MAX_NODES);
    for (uint32_t node = 0; node < LOCUS_MAX_NODES; ++node) {
      keys[node] = node;
      if (node >= nodes.size()) continue;
      const ReuseportNode& row = nodes[node];
      if (row.slots.size() > LOCUS_REUSEPORT_NODE_SLOTS) return E2BIG;
      values[node].count = row.slots.size();
      values[node].spill_permille = row.spill_permille;
      for (size_t i = 0; i < row.slots.size(); ++i) {
        values[node].slots[i] = row.slots[i];
      }
    }
    return UpdateAll(skel_->maps.nodes, keys.data(), values.data(),
                     keys.size());
  }

  int SetArms(const ReuseportArms& arms) override {
    uint32_t keys[LOCUS_REUSEPORT_NR_ARMS] = {LOCUS_REUSEPORT_ARM_CONTROL,
                                              LOCUS_REUSEPORT_ARM_TREATED};
    locus_reuseport_node values[LOCUS_REUSEPORT_NR_ARMS] = {};
    const std::vector<uint32_t>* rows[LOCUS_REUSEPORT_NR_ARMS] = {
        &arms.control, &arms.treated};
    for (uint32_t arm = 0; arm < LOCUS_REUSEPORT_NR_ARMS; ++arm) {
      if (rows[arm]->size() > LOCUS_REUSEPORT_NODE_SLOTS) return E2BIG;
      values[arm].count = rows[arm]->size();
      for (size_t i = 0; i < rows[arm]->size(); ++i)
        values[arm].slots[i] = (*rows[arm])[i];
    }
    values[LOCUS_REUSEPORT_ARM_CONTROL].spill_permille = arms.control_share;
    return UpdateAll(skel_->maps.arms, keys, values, LOCUS_REUSEPORT_NR_ARMS);
  }

  int AttachThrough(int socket_fd) override {
    int prog = bpf_program__fd(
        migrates_ ? skel_->progs.locus_reuseport_select_or_migrate
                  : skel_->progs.locus_reuseport_select);
    if (setsockopt(socket_fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF, &prog,
                   sizeof(prog)) != 0) {
      return errno;
    }
    return 0;
  }

  int ReadCounters(ReuseportCounters* counters) override {
    *counters = {};
    std::vector<uint64_t> per_cpu(libbpf_num_possible_cpus());
    for (uint32_t row = 0; row < LOCUS_REUSEPORT_COUNTER_ROWS; ++row) {
      uint64_t sums[LOCUS_REUSEPORT_NR_PATHS] = {};
      for (uint32_t path = 0; path < LOCUS_REUSEPORT_NR_PATHS; ++path) {
        uint32_t key = row * LOCUS_REUSEPORT_NR_PATHS + path;
        int err = -bpf_map__lookup_elem(skel_->maps.counters, &key, sizeof(key),
                                        per_cpu.data(),
                                        per_cpu.size() * sizeof(uint64_t), 0);
        if (err != 0) return err;
        for (uint64_t n : per_cpu) sums[path] += n;
      }
      ReuseportPathCounts counts{
          sums[LOCUS_REUSEPORT_LOCAL], sums[LOCUS_REUSEPORT_SPILLED],
          sums[LOCUS_REUSEPORT_FALLBACK], sums[LOCUS_REUSEPORT_MIGRATED],
          sums[LOCUS_REUSEPORT_CONTROL]};
      if (row == kNoNode) {
        counters->no_node = counts;
      } else if (counts != ReuseportPathCounts{}) {
        counters->nodes[row] = counts;
      }
    }
    return 0;
  }

 private:
  static int UpdateAll(bpf_map* map, const void* keys, const void* values,
                       uint32_t count) {
    uint32_t n = count;
    if (bpf_map_update_batch(bpf_map__fd(map), keys, values, &n, nullptr) !=
        0) {
      return errno;
    }
    return n == count ? 0 : EIO;
  }

  reuseport_bpf* skel_;
  bool migrates_;
};

class KernelReuseportOps : public ReuseportOps {
 public:
  ReuseportLimits Limits() const override {
    return {LOCUS_REUSEPORT_MAX_SOCKETS, LOCUS_MAX_NODES,
            LOCUS_REUSEPORT_NODE_SLOTS, LOCUS_REUSEPORT_SPILL_SCALE};
  }

  absl::StatusOr<std::unique_ptr<ReuseportProgram>> Load() override {
    if (migrate_ok_.value_or(true)) {
      auto program = LoadOne(/*migrate=*/true);
      if (program.ok()) {
        migrate_ok_ = true;
        return program;
      }
    }
    auto program = LoadOne(/*migrate=*/false);
    // Only a kernel that loads the plain program but refused the other
    // lacks SELECT_OR_MIGRATE; any other failure may pass next time.
    if (program.ok()) migrate_ok_ = false;
    return program;
  }

  int Duplicate(int32_t pid, int fd, uint64_t inode, UniqueFd* out) override {
    UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
    if (!pidfd.valid()) return errno;
    UniqueFd dup(
        static_cast<int>(syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0)));
    if (!dup.valid()) return errno;
    struct stat st;
    if (fstat(dup.get(), &st) != 0) return errno;
    if (!S_ISSOCK(st.st_mode) || st.st_ino != inode) return ESTALE;
    *out = std::move(dup);
    return 0;
  }

  int Detach(int socket_fd) override {
    int unused = 0;
    if (setsockopt(socket_fd, SOL_SOCKET, SO_DETACH_REUSEPORT_BPF, &unused,
                   sizeof(unused)) != 0) {
      return errno;
    }
    return 0;
  }

 private:
  static absl::StatusOr<std::unique_ptr<ReuseportProgram>> LoadOne(
      bool migrate) {
    reuseport_bpf* skel = reuseport_bpf__open();
    if (skel == nullptr) {
      return LastErrnoStatus("open bpf/reuseport.bpf.c");
    }
    bpf_program__set_autoload(
        migrate ? skel->progs.locus_reuseport_select
                : skel->progs.locus_reuseport_select_or_migrate,
        false);
    int err = -reuseport_bpf__load(skel);
    if (err != 0) {
      reuseport_bpf__destroy(skel);
      return ErrnoStatus(
          absl::StrCat("load the ",
                       migrate ? "sk_reuseport/migrate" : "sk_reuseport",
                       " program (bpf/reuseport.bpf.c)"),
          err);
    }
    return std::make_unique<KernelProgram>(skel, migrate);
  }

  std::optional<bool> migrate_ok_;
};

}  // namespace

std::unique_ptr<ReuseportOps> MakeKernelReuseportOps() {
  return std::make_unique<KernelReuseportOps>();
}

}  // namespace locus
