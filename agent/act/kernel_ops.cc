#include "agent/act/kernel_ops.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "agent/host/cpu_mask.h"
#include "agent/host/file_util.h"
#include "agent/host/proc_parse.h"
#include "common/capabilities.h"
#include "common/os_error.h"
#include "common/unique_fd.h"

namespace locus {
namespace {

// A glibc CPU set for CPUs 0..count-1, freed with its owner.
struct CpuSetFree {
  void operator()(cpu_set_t* set) const { CPU_FREE(set); }
};
using CpuSet = std::unique_ptr<cpu_set_t, CpuSetFree>;
CpuSet AllocCpuSet(int count, size_t* size) {
  *size = CPU_ALLOC_SIZE(count);
  CpuSet set(CPU_ALLOC(count));
  CPU_ZERO_S(*size, set.get());
  return set;
}

class KernelThreadOps : public ThreadOps {
 public:
  KernelThreadOps(std::string procfs_root, std::string cgroup_root,
                  std::string sysfs_root)
      : procfs_root_(std::move(procfs_root)),
        cgroup_root_(std::move(cgroup_root)),
        sysfs_root_(std::move(sysfs_root)) {}

  int GetAffinity(int32_t tid, std::vector<int>* cpus) override {
    size_t size = 0;
    CpuSet set = AllocCpuSet(kMaxCpuNumber + 1, &size);
    if (sched_getaffinity(tid, size, set.get()) != 0) return errno;
    cpus->clear();
    // Stop at the last set bit: the host scan calls this for every target
    // thread each tick.
    int left = CPU_COUNT_S(size, set.get());
    for (int cpu = 0; left > 0 && cpu <= kMaxCpuNumber; ++cpu) {
      if (CPU_ISSET_S(cpu, size, set.get())) {
        cpus->push_back(cpu);
        --left;
      }
    }
    return 0;
  }

  int SetAffinity(int32_t tid, const std::vector<int>& cpus) override {
    if (cpus.empty()) return EINVAL;
    int max = 0;
    for (int cpu : cpus) {
      if (cpu < 0 || cpu > kMaxCpuNumber) return EINVAL;
      max = std::max(max, cpu);
    }
    size_t size = 0;
    CpuSet set = AllocCpuSet(max + 1, &size);
    for (int cpu : cpus) CPU_SET_S(cpu, size, set.get());
    return sched_setaffinity(tid, size, set.get()) == 0 ? 0 : errno;
  }

  int StartTime(int32_t tid, uint64_t* start_time) override {
    // The thread's own stat, under task/: /proc/TID/stat is the whole
    // process's, which the kernel builds by walking every thread (11 ms per
    // read in a process of 10,000 threads, so a minute per tick).
    auto text = ReadTextFile(
        JoinPath(procfs_root_, absl::StrCat(tid, "/task/", tid, "/stat")));
    if (!text.ok()) return absl::IsNotFound(text.status()) ? ESRCH : EIO;
    absl::StatusOr<ProcStat> stat = ParseProcStat(*text);
    if (!stat.ok()) return EIO;
    *start_time = stat->start_time;
    return 0;
  }

  int CpusetCpus(int32_t tid, std::vector<int>* cpus) override {
    auto text =
        ReadTextFile(JoinPath(procfs_root_, absl::StrCat(tid, "/cgroup")));
    if (!text.ok()) return absl::IsNotFound(text.status()) ? ESRCH : EIO;
    for (const CgroupLine& line : ParseCgroupLines(*text)) {
      const std::string path(line.path);
      if (line.hierarchy == "0" && line.controllers.empty()) {
        // cgroup v2, mounted at the root or at unified/ (hybrid systemd).
        if (FromCgroup({cgroup_root_, JoinPath(cgroup_root_, "unified")}, path,
                       "cpuset.cpus.effective", cpus)) {
          return 0;
        }
      } else if (absl::StrContains(line.controllers, "cpuset")) {
        if (FromCgroup({JoinPath(cgroup_root_, "cpuset")}, path,
                       "cpuset.effective_cpus", cpus)) {
          return 0;
        }
      }
    }
    auto online =
        ReadFirstLine(JoinPath(sysfs_root_, "devices/system/cpu/online"));
    if (!online.ok()) return ErrnoOf(online.status());
    auto parsed = ParseCpuList(*online);
    if (!parsed.ok()) return EIO;
    *cpus = *std::move(parsed);
    return 0;
  }

 private:
  // The nearest cgroup at or above `path` (under each mount in `mounts`)
  // that has the cpuset file: a cgroup without the cpuset controller
  // inherits its parent's CPUs, and the root always has the file.
  static bool FromCgroup(const std::vector<std::string>& mounts,
                         std::string path, const std::string& file,
                         std::vector<int>* cpus) {
    while (true) {
      for (const std::string& mount : mounts) {
        auto text = ReadFirstLine(JoinPath(JoinPath(mount, path), file));
        if (!text.ok()) continue;
        auto parsed = ParseCpuList(*text);
        if (parsed.ok() && !parsed->empty()) {
          *cpus = *std::move(parsed);
          return true;
        }
      }
      while (!path.empty() && path.back() == '/') path.pop_back();
      if (path.empty()) return false;
      size_t slash = path.find_last_of('/');
      path = slash == std::string::npos ? "" : path.substr(0, slash);
    }
  }

  std::string procfs_root_;
  std::string cgroup_root_;
  std::string sysfs_root_;
};

class ProcIrqOps : public IrqOps {
 public:
  explicit ProcIrqOps(std::string procfs_root)
      : procfs_root_(std::move(procfs_root)) {}

  int ReadAffinity(int irq, std::vector<int>* cpus) override {
    auto text = ReadTextFile(Path(irq));
    if (!text.ok()) return ErrnoOf(text.status());
    auto parsed = ParseCpuList(*text);
    if (!parsed.ok()) return EIO;
    // Empty while a move is completing: the kernel shows the pending mask
    // without a lock, and the mover clears it after the flag (seen under
    // load, just after Locus's own write). Read again later.
    if (parsed->empty()) return EAGAIN;
    *cpus = *std::move(parsed);
    return 0;
  }

  int WriteAffinity(int irq, const std::vector<int>& cpus) override {
    std::string text = FormatCpuList(cpus) + "\n";
    UniqueFd fd(open(Path(irq).c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
    if (!fd) return errno;
    ssize_t n = write(fd.get(), text.data(), text.size());
    int rc = n == static_cast<ssize_t>(text.size()) ? 0 : (n < 0 ? errno : EIO);
    // Closed here, not by the owner: an error close reports fails the write.
    if (close(fd.release()) != 0 && rc == 0) rc = errno;
    return rc;
  }

 private:
  std::string Path(int irq) const {
    return JoinPath(procfs_root_,
                    absl::StrCat("irq/", irq, "/smp_affinity_list"));
  }
  std::string procfs_root_;
};

// Whether this process has CAP_SYS_ADMIN in its effective set: without it
// the kernel writes 0 for every PFN in /proc/PID/pagemap, so huge pages
// cannot be told apart and the walk goes by base page.
bool HasSysAdmin() {
  absl::StatusOr<uint64_t> effective = EffectiveCapabilities();
  return effective.ok() && HasCapability(*effective, CAP_SYS_ADMIN);
}

class KernelPageOps : public PageOps {
 public:
  static constexpr uint64_t kMaxRangeBytes = 64ull << 30;

  explicit KernelPageOps(std::string procfs_root)
      : procfs_root_(std::move(procfs_root)),
        frames_(HasSysAdmin() ? MakeProcPageFrameReader(procfs_root_)
                              : nullptr) {}

  int MovePages(int32_t pid, size_t count, void** pages, const int* nodes,
                int* status) override {
    // MPOL_MF_MOVE (1 << 1): only pages mapped by this process alone, so a
    // worker never drags shared library pages from under its siblings.
    constexpr int kMpolMfMove = 1 << 1;
    long rc = syscall(SYS_move_pages, pid, count, pages, nodes, status,
                      nodes == nullptr ? 0 : kMpolMfMove);
    return rc < 0 ? errno : 0;
  }

  int Ranges(int32_t pid, std::vector<MemRange>* ranges) override {
    auto text =
        ReadTextFile(JoinPath(procfs_root_, absl::StrCat(pid, "/maps")));
    if (!text.ok())
      return absl::IsNotFound(text.status()) ? ESRCH : ErrnoOf(text.status());
    // numa_maps (which the host model reads anyway) says which mappings
    // have resident pages; without it every mapping is walked.
    auto numa =
        ReadTextFile(JoinPath(procfs_root_, absl::StrCat(pid, "/numa_maps")));
    *ranges = ParseMigratableRanges(
        *text,
        numa.ok() ? std::optional<absl::string_view>(*numa) : std::nullopt,
        kMaxRangeBytes);
    return 0;
  }

  uint64_t PageSize() override {
    return static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  }

  PageFrameReader* Frames() override { return frames_.get(); }

 private:
  std::string procfs_root_;
  std::unique_ptr<PageFrameReader> frames_;  // null: no PFNs to read
};

}  // namespace

std::unique_ptr<ThreadOps> MakeKernelThreadOps(const std::string& procfs_root,
                                               const std::string& cgroup_root,
                                               const std::string& sysfs_root) {
  return std::make_unique<KernelThreadOps>(procfs_root, cgroup_root,
                                           sysfs_root);
}

std::unique_ptr<IrqOps> MakeProcIrqOps(const std::string& procfs_root) {
  return std::make_unique<ProcIrqOps>(procfs_root);
}

std::unique_ptr<PageOps> MakeKernelPageOps(const std::string& procfs_root) {
  return std::make_unique<KernelPageOps>(procfs_root);
}

}  // namespace locus
