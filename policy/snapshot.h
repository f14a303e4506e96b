// What the agent knows about the host at one control tick: the input of
// Decide(). Plain structs, filled by agent/ (sensors + host model) and by
// tests directly. Counters are deltas over the last tick unless named *_total.
#ifndef LOCUS_POLICY_SNAPSHOT_H_
#define LOCUS_POLICY_SNAPSHOT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"

namespace locus {

// Linux softirq vectors, in the kernel's order (include/linux/interrupt.h).
enum SoftirqVector : int {
  kSoftirqHi = 0,
  kSoftirqTimer,
  kSoftirqNetTx,
  kSoftirqNetRx,
  kSoftirqBlock,
  kSoftirqIrqPoll,
  kSoftirqTasklet,
  kSoftirqSched,
  kSoftirqHrtimer,
  kSoftirqRcu,
  kNumSoftirqVectors,
};

struct Node {
  int id = 0;
  std::vector<int>
      cpus;  // online CPUs, ascending; empty for a memory-only node
  uint64_t mem_total_bytes = 0;
  uint64_t mem_free_bytes = 0;
  std::vector<int> distances;  // indexed by position in Topology::nodes
  // The kernel's memory tier of the node: N of the memory_tierN that lists
  // it under /sys/devices/virtual/memory_tiering (its abstract distance /
  // 128: a larger N is slower memory, CXL or other far memory below DRAM);
  // -1 where the kernel lists no tiers (before 6.1, or no node in one).
  int tier = -1;
};

struct Topology {
  std::vector<Node> nodes;    // ascending by id
  std::vector<int> cpu_node;  // cpu -> node id; -1 for offline/unknown CPUs
};

// The kernel's own movers of pages between memory tiers, and what they
// moved, read each tick. Locus leaves the pages on a slower tier to them
// (policy/tiers.h) and shows these beside its own page moves, so that a
// fight between the two would be seen.
struct MemoryTiering {
  // /sys/kernel/mm/numa/demotion_enabled: reclaim demotes cold pages to a
  // slower tier instead of dropping them; -1 unreadable.
  int demotion_enabled = -1;
  // DAMON schemes of running kdamonds whose action moves pages between
  // nodes (migrate_hot, migrate_cold), e.g. "kdamond 0 scheme 1:
  // migrate_cold to node 2".
  std::vector<std::string> damon_migrations;
  // /proc/vmstat since boot: pages promoted to a faster tier
  // (pgpromote_success) and demoted to a slower one (pgdemote_kswapd +
  // pgdemote_direct + pgdemote_khugepaged); -1 where the kernel has no
  // such counter.
  int64_t promoted_total = -1;
  int64_t demoted_total = -1;
};

struct CpuSample {
  int cpu = 0;
  double busy = 0;  // fraction of the tick spent not idle, 0..1
  uint64_t softirq_ns[kNumSoftirqVectors] = {};
  // Fraction of the tick the CPU ran anything at all (every task of every
  // class, IRQs and softirqs), from /proc/stat: `busy` comes from the
  // scheduler sensor's sampled fair-class slices and is absent without BPF.
  // -1 when not read this tick.
  double busy_all = -1;
};

// Hinting faults attributed to one memory node.
struct NodeFaults {
  uint64_t local = 0;   // faulting CPU was on this node
  uint64_t remote = 0;  // faulting CPU was on another node
};

// Per-node figures of a thread or target, kept inline for hosts of up to
// kInlineNodes nodes (a larger host spills to the heap). Decide() reads
// every thread's figures once per tick; as separate heap blocks, a 100k-thread
// snapshot scattered them over ~70 MiB and each block cost a cache miss.
inline constexpr size_t kInlineNodes = 8;
template <typename T>
using PerNode = absl::InlinedVector<T, kInlineNodes>;

struct ThreadSample {
  int32_t tid = 0;
  int cpu = -1;                   // last CPU it ran on
  std::vector<int> allowed_cpus;  // current affinity, ascending
  PerNode<uint64_t> runtime_ns;   // per node, indexed like Topology::nodes
  uint64_t migrations = 0;
  uint64_t cross_node_migrations = 0;
  PerNode<NodeFaults> faults;  // per memory node, indexed like Topology::nodes
  uint64_t net_rx_softirq_ns = 0;  // NET_RX time spent interrupting this thread
  // Time it was runnable but waited on a run queue for a CPU (schedstat's
  // second field), over the tick: how much its CPUs were wanted by others.
  uint64_t wait_ns = 0;
};

enum class TargetRole { kOther = 0, kMaster, kWorker };

// A cgroup's cpuset: the CPUs and memory node ids the kernel lets its
// processes use (cpuset.cpus.effective and cpuset.mems.effective). Empty
// lists: no constraint known this scan.
struct CgroupCpuset {
  std::string path;  // in the cpuset hierarchy
  std::vector<int> cpus;
  std::vector<int> mems;
  // Who places its processes instead of Locus, with why ("the kubelet:
  // static CPU manager, exclusive cpus 4-7"); empty: Locus may.
  std::string placed_by;
};

// A process selected by the policy, with its threads; or one worker thread
// of a server whose workers are threads (`process` set), placed on its own.
struct Target {
  int32_t pid = 0;  // a thread worker's: its thread's id
  // A thread worker's process, whose memory and other threads it shares;
  // 0 for a process.
  int32_t process = 0;
  std::string comm;
  TargetRole role = TargetRole::kOther;
  // The server instance it belongs to: the topmost selected process above
  // it (nginx's master), itself when it has none.
  int32_t instance = 0;
  std::vector<ThreadSample> threads;
  PerNode<uint64_t> resident_pages;  // per node, indexed like Topology::nodes
  uint64_t page_size = 4096;
  // Its cgroup's cpuset, shared by the targets of one cgroup; null when
  // its cgroup is unknown.
  std::shared_ptr<const CgroupCpuset> cgroup;
};

// The process a target is or belongs to.
inline int32_t ProcessOf(const Target& target) {
  return target.process != 0 ? target.process : target.pid;
}

// A process a selector matched that the agent leaves alone because it is
// not trusted (any user can name a binary nginx): kept so that explain can
// say why it is not a target.
struct RefusedProcess {
  int32_t pid = 0;
  std::string comm;
  std::string reason;  // "not trusted as a target: its executable ..."
};

struct IrqSample {
  int irq = 0;
  std::string name;            // e.g. "virtio1-input.0"
  std::string net_device;      // e.g. "eth0", empty when not a NIC queue
  int queue = -1;              // NIC queue index, -1 when unknown
  int device_node = -1;        // NUMA node of the device, -1 when unknown
  std::vector<int> affinity;   // smp_affinity_list
  std::vector<int> effective;  // effective_affinity_list
  std::vector<uint64_t> count_per_cpu;  // delta over the tick, indexed by cpu
  bool managed = false;  // kernel-managed: affinity cannot be set
};

// A TCP listening socket of a reuseport group, and the worker that accepts
// on it.
struct ListenSocketSample {
  uint64_t inode = 0;
  int32_t owner_pid = 0;  // 0: no single worker accepts on it
  bool shared = false;    // several worker threads accept on it
};

// The targets' listening sockets of one address and port in one network
// namespace: the kernel picks among them for each new connection.
struct ListenGroupSample {
  std::string name;  // "netns 4026531840 0.0.0.0:80"
  uint16_t port = 0;
  std::vector<ListenSocketSample> sockets;
  // Its workers are threads (owner_pid: the accepting thread's id).
  bool thread_workers = false;
};

struct Snapshot {
  uint64_t now_ns =
      0;  // monotonic time of this snapshot (an input, not a clock)
  uint64_t tick_ns = 1'000'000'000;
  // kernel.numa_balancing (0 off, 1 NUMA balancing, 2 memory tiering, 3
  // both), read once per tick for everyone who needs it; -1: unreadable.
  int numa_balancing_mode = -1;
  Topology topology;
  MemoryTiering tiering;
  std::vector<CpuSample> cpus;  // indexed by cpu
  std::vector<Target> targets;
  std::vector<RefusedProcess> refused_targets;  // selected, not trusted
  std::vector<IrqSample> irqs;
  std::vector<ListenGroupSample> listen_groups;
};

}  // namespace locus

#endif  // LOCUS_POLICY_SNAPSHOT_H_
