// The kernel calls the actuators make, behind small interfaces so that tests
// inject fakes (tests/act/fake_kernel_ops.h) and the logic above them (journal
// first, cpuset intersection, outcomes) is tested without root.
//
// Methods return 0 or an errno value: the errno *is* the outcome (ESRCH: task
// gone, EINVAL: cpuset forbids, EIO: managed IRQ, ENOENT: IRQ gone).
#ifndef LOCUS_AGENT_ACT_KERNEL_OPS_H_
#define LOCUS_AGENT_ACT_KERNEL_OPS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agent/act/memory/huge_pages.h"  // PageFrameReader
#include "agent/host/proc_parse.h"        // MemRange

namespace locus {

class ThreadOps {
 public:
  virtual ~ThreadOps() = default;
  // sched_getaffinity / sched_setaffinity on one thread.
  virtual int GetAffinity(int32_t tid, std::vector<int>* cpus) = 0;
  virtual int SetAffinity(int32_t tid, const std::vector<int>& cpus) = 0;
  // Start time (field 22 of /proc/TID/task/TID/stat, clock ticks since
  // boot): with the TID it names a thread uniquely, so a recycled TID is
  // never mistaken for the thread Locus journaled.
  virtual int StartTime(int32_t tid, uint64_t* start_time) = 0;
  // CPUs the thread's cpuset allows (cgroup v2 cpuset.cpus.effective, v1
  // cpuset.effective_cpus), or every online CPU when no cpuset applies.
  virtual int CpusetCpus(int32_t tid, std::vector<int>* cpus) = 0;
};

class IrqOps {
 public:
  virtual ~IrqOps() = default;
  // /proc/irq/N/smp_affinity_list.
  virtual int ReadAffinity(int irq, std::vector<int>* cpus) = 0;
  virtual int WriteAffinity(int irq, const std::vector<int>& cpus) = 0;
};

class PageOps {
 public:
  virtual ~PageOps() = default;
  // move_pages(2) on `count` pages: with nodes == nullptr it only queries
  // (status[i] = node or -errno), else moves page i to nodes[i].
  virtual int MovePages(int32_t pid, size_t count, void** pages,
                        const int* nodes, int* status) = 0;
  // Private writable mappings from /proc/PID/maps, ascending, that have
  // resident pages per /proc/PID/numa_maps and are at most 64 GiB (larger
  // ones are sparse reservations: sanitizer shadow, JVM heap reserve).
  virtual int Ranges(int32_t pid, std::vector<MemRange>* ranges) = 0;
  virtual uint64_t PageSize() = 0;
  // The page-frame files that tell huge pages apart (huge_pages.h), or null
  // where they say nothing (no CAP_SYS_ADMIN: the pagemap has no PFNs): the
  // walk then goes by base page. Borrowed; lives as long as these ops.
  virtual PageFrameReader* Frames() { return nullptr; }
};

// The real implementations. Roots are "/proc" and "/sys/fs/cgroup" on a
// host; IRQ files are written under procfs_root, so a fixture tree stands in.
std::unique_ptr<ThreadOps> MakeKernelThreadOps(const std::string& procfs_root,
                                               const std::string& cgroup_root,
                                               const std::string& sysfs_root);
std::unique_ptr<IrqOps> MakeProcIrqOps(const std::string& procfs_root);
std::unique_ptr<PageOps> MakeKernelPageOps(const std::string& procfs_root);

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_KERNEL_OPS_H_
