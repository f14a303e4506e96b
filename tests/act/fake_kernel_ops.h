// In-memory stand-ins for the kernel calls, for tests of the actuator logic
// and for anyone (the control loop's tests) who needs actuators without root.
#ifndef LOCUS_TESTS_ACT_FAKE_KERNEL_OPS_H_
#define LOCUS_TESTS_ACT_FAKE_KERNEL_OPS_H_

#include <cerrno>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "agent/act/kernel_ops.h"
#include "agent/host/cpu_mask.h"
#include "common/clock.h"

namespace locus {

class FakeThreadOps : public ThreadOps {
 public:
  struct Thread {
    uint64_t start_time = 1;
    std::vector<int> affinity;
    std::vector<int> cpuset;
  };
  std::map<int32_t, Thread> threads;
  int set_calls = 0;
  int get_calls = 0;
  int set_error = 0;  // errno SetAffinity returns when non-zero

  int GetAffinity(int32_t tid, std::vector<int>* cpus) override {
    ++get_calls;
    auto it = threads.find(tid);
    if (it == threads.end()) return ESRCH;
    *cpus = it->second.affinity;
    return 0;
  }
  int SetAffinity(int32_t tid, const std::vector<int>& cpus) override {
    ++set_calls;
    auto it = threads.find(tid);
    if (it == threads.end()) return ESRCH;
    if (set_error != 0) return set_error;
    // Like the kernel: the effective mask is the request within the cpuset.
    std::vector<int> effective = IntersectCpus(cpus, it->second.cpuset);
    if (effective.empty()) return EINVAL;
    it->second.affinity = effective;
    return 0;
  }
  int StartTime(int32_t tid, uint64_t* start_time) override {
    auto it = threads.find(tid);
    if (it == threads.end()) return ESRCH;
    *start_time = it->second.start_time;
    return 0;
  }
  int CpusetCpus(int32_t tid, std::vector<int>* cpus) override {
    auto it = threads.find(tid);
    if (it == threads.end()) return ESRCH;
    *cpus = it->second.cpuset;
    return 0;
  }
};

class FakeIrqOps : public IrqOps {
 public:
  std::map<int, std::vector<int>> affinity;
  std::map<int, int> write_error;  // irq -> errno on write (EIO: managed)
  std::map<int, int> read_error;   // irq -> errno on read (EAGAIN: moving)
  int write_calls = 0;

  int ReadAffinity(int irq, std::vector<int>* cpus) override {
    auto it = affinity.find(irq);
    if (it == affinity.end()) return ENOENT;
    if (auto err = read_error.find(irq); err != read_error.end()) {
      return err->second;
    }
    *cpus = it->second;
    return 0;
  }
  int WriteAffinity(int irq, const std::vector<int>& cpus) override {
    ++write_calls;
    auto it = affinity.find(irq);
    if (it == affinity.end()) return ENOENT;
    if (auto err = write_error.find(irq); err != write_error.end()) {
      return err->second;
    }
    it->second = cpus;
    return 0;
  }
};

// A process's pages, each on a node (or absent: -ENOENT). Every move_pages
// call advances `clock` by `ns_per_call`, so time budgets can be tested.
// Addresses in `huge` are the first pages of THPs: moving that address moves
// all 512 base pages, as the kernel moves a THP whole.
class FakePageOps : public PageOps {
 public:
  struct Process {
    std::vector<MemRange> ranges;
    std::map<uint64_t, int> page_node;  // address -> node; absent: not present
  };
  std::map<int32_t, Process> processes;
  uint64_t page_size = 4096;
  FakeClock* clock = nullptr;
  uint64_t ns_per_call = 0;
  int query_calls = 0;
  int move_calls = 0;
  int ranges_calls = 0;
  size_t largest_call = 0;
  size_t largest_move = 0;
  std::map<uint64_t, int> move_errors;  // address -> -errno on move
  // Nodes outside the task's cpuset.mems: a move there fails whole (EACCES).
  std::set<int> forbidden_nodes;
  std::set<uint64_t> huge;
  size_t entries_queried = 0, entries_moved = 0;  // over all calls
  PageFrameReader* frames = nullptr;              // borrowed; Frames()

  int MovePages(int32_t pid, size_t count, void** pages, const int* nodes,
                int* status) override {
    auto it = processes.find(pid);
    if (it == processes.end()) return ESRCH;
    nodes == nullptr ? ++query_calls : ++move_calls;
    for (size_t i = 0; nodes != nullptr && i < count; ++i) {
      if (forbidden_nodes.count(nodes[i])) return EACCES;
    }
    largest_call = std::max(largest_call, count);
    if (nodes != nullptr) largest_move = std::max(largest_move, count);
    (nodes == nullptr ? entries_queried : entries_moved) += count;
    if (clock != nullptr) clock->Advance(ns_per_call);
    for (size_t i = 0; i < count; ++i) {
      uint64_t addr = reinterpret_cast<uint64_t>(pages[i]);
      auto page = it->second.page_node.find(addr);
      if (page == it->second.page_node.end()) {
        status[i] = -ENOENT;
        continue;
      }
      if (nodes != nullptr) {
        if (auto err = move_errors.find(addr); err != move_errors.end()) {
          status[i] = err->second;
          continue;
        }
        page->second = nodes[i];
        if (huge.count(addr)) MoveRest(it->second, addr, nodes[i]);
      }
      status[i] = page->second;
    }
    return 0;
  }
  int Ranges(int32_t pid, std::vector<MemRange>* ranges) override {
    ++ranges_calls;
    auto it = processes.find(pid);
    if (it == processes.end()) return ESRCH;
    *ranges = it->second.ranges;
    return 0;
  }
  uint64_t PageSize() override { return page_size; }
  PageFrameReader* Frames() override { return frames; }

 private:
  void MoveRest(Process& process, uint64_t head, int node) {
    for (uint64_t k = 1; k < kPagesPerHugePage; ++k) {
      auto page = process.page_node.find(head + k * page_size);
      if (page != process.page_node.end()) page->second = node;
    }
  }
};

}  // namespace locus

#endif  // LOCUS_TESTS_ACT_FAKE_KERNEL_OPS_H_
