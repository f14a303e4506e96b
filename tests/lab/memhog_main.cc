// lab_memhog: the synthetic worker of the lab's misplaced-memory scenario.
// It first-touches --mb MiB from --touch_node's CPUs (checking with
// move_pages(2) that the pages really are there), prints "ready", then moves
// itself to --run_node's CPUs and keeps reading and writing every page, so
// that the kernel's NUMA balancing sees hinting faults on them. It measures
// nothing about placement: the benchmark reads that from outside
// (/proc/PID/numa_maps), the same way for every workload and every tool.
// --bind_node first-touches it on another node (one without CPUs too, a
// lower memory tier) from --touch_node's CPUs; --hot_mb keeps the passes to
// the buffer's first MiB, leaving the rest cold.
// Once in place it names itself (comm) "lab_memhog": started through a link
// of another name, it is invisible to a tool that selects it by name until
// the misplacement it stands for exists.
#include <numa.h>
#include <numaif.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/lab/memhog_args.h"

namespace {

using Clock = std::chrono::steady_clock;

// Share of first-touched pages that must be on the touch node: anything
// less means the placement the scenario starts from is not the one asked.
constexpr double kMinTouchShare = 0.99;

bool RunOnNode(int node) {
  if (numa_run_on_node(node) != 0) {
    std::fprintf(stderr, "lab_memhog: cannot run on node %d: %s\n", node,
                 std::strerror(errno));
    return false;
  }
  return true;
}

// Pages of [base, base + pages * page_size) on `node`, by move_pages
// queries. A page the query reports absent is touched and asked again: with
// NUMA balancing on, 6.1 reports the pages its scanner has just made
// PROT_NONE as absent until they are touched.
long PagesOnNode(char* base, size_t pages, size_t page_size, int node) {
  constexpr size_t kBatch = 4096;
  constexpr int kTries = 3;
  std::vector<void*> addrs(kBatch);
  std::vector<int> status(kBatch);
  long on_node = 0;
  for (size_t first = 0; first < pages; first += kBatch) {
    size_t n = std::min(kBatch, pages - first);
    for (size_t i = 0; i < n; ++i) addrs[i] = base + (first + i) * page_size;
    for (int attempt = 0; attempt < kTries && n > 0; ++attempt) {
      if (move_pages(0, n, addrs.data(), nullptr, status.data(), 0) != 0) {
        std::fprintf(stderr, "lab_memhog: move_pages query: %s\n",
                     std::strerror(errno));
        return -1;
      }
      size_t absent = 0;
      for (size_t i = 0; i < n; ++i) {
        if (status[i] == -ENOENT) {
          (void)*static_cast<volatile char*>(addrs[i]);
          addrs[absent++] = addrs[i];
        } else {
          on_node += status[i] == node;
        }
      }
      n = absent;
    }
  }
  return on_node;
}

constexpr size_t kHugePageSize = 2u << 20;

// `bytes` of private anonymous memory, untouched; with `thp` its start is
// 2 MiB-aligned (the unaligned head and tail of a larger mapping are
// unmapped) and advised MADV_HUGEPAGE, so that every 2 MiB of it can be a
// huge page at first touch. nullptr after saying why.
char* MapBuffer(size_t bytes, bool thp) {
  const size_t slack = thp ? kHugePageSize : 0;
  void* mapping = mmap(nullptr, bytes + slack, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) {
    std::fprintf(stderr, "lab_memhog: mmap %zu bytes: %s\n", bytes + slack,
                 std::strerror(errno));
    return nullptr;
  }
  char* raw = static_cast<char*>(mapping);
  if (!thp) return raw;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  char* base = raw + (kHugePageSize - start % kHugePageSize) % kHugePageSize;
  if (base > raw) munmap(raw, base - raw);
  if (char* tail = base + bytes; tail < raw + bytes + slack) {
    munmap(tail, raw + bytes + slack - tail);
  }
  if (madvise(base, bytes, MADV_HUGEPAGE) != 0) {
    std::fprintf(stderr, "lab_memhog: madvise(MADV_HUGEPAGE): %s\n",
                 std::strerror(errno));
    return nullptr;
  }
  return base;
}

// AnonHugePages of [base, base + bytes) in KiB, from /proc/self/smaps; -1
// after saying why.
long long AnonHugeKib(const char* base, size_t bytes) {
  std::ifstream file("/proc/self/smaps");
  std::stringstream text;
  text << file.rdbuf();
  if (!file) {
    std::fprintf(stderr, "lab_memhog: cannot read /proc/self/smaps\n");
    return -1;
  }
  const uint64_t start = reinterpret_cast<uintptr_t>(base);
  absl::StatusOr<uint64_t> huge =
      locus::AnonHugeBytes(text.str(), start, start + bytes);
  if (!huge.ok()) {
    std::fprintf(stderr, "lab_memhog: /proc/self/smaps: %s\n",
                 std::string(huge.status().message()).c_str());
    return -1;
  }
  return static_cast<long long>(*huge >> 10);
}

}  // namespace

int main(int argc, char** argv) {
  auto options = locus::ParseMemhogArgs({argv + 1, argv + argc});
  if (!options.ok()) {
    std::fprintf(stderr, "lab_memhog: %s\n%s",
                 std::string(options.status().message()).c_str(),
                 locus::kMemhogUsage);
    return 2;
  }
  if (numa_available() < 0) {
    std::fprintf(stderr, "lab_memhog: the kernel has no NUMA support\n");
    return 1;
  }
  // The node the buffer is first touched on: touch_node's, or bind_node,
  // which may have memory and no CPUs (a lower memory tier).
  const int mem_node =
      options->bind_node >= 0 ? options->bind_node : options->touch_node;
  for (int node : {options->touch_node, options->run_node, mem_node}) {
    if (node > numa_max_node() || numa_node_size64(node, nullptr) <= 0) {
      std::fprintf(stderr, "lab_memhog: no node %d with memory (max %d)\n",
                   node, numa_max_node());
      return 1;
    }
  }

  const size_t page_size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t bytes = options->mb << 20;
  const size_t pages = bytes / page_size;
  if (!RunOnNode(options->touch_node)) return 1;
  // The thread's memory policy binds the first touch to the node even if
  // the scheduler briefly runs us elsewhere; it is reset to the default
  // afterwards, because a task policy other than the default would exempt
  // the pages from NUMA balancing (mpol_misplaced) and skew the comparison.
  struct bitmask* touch_mask = numa_allocate_nodemask();
  numa_bitmask_setbit(touch_mask, mem_node);
  numa_set_membind(touch_mask);
  numa_free_nodemask(touch_mask);
  char* base = MapBuffer(bytes, options->thp);
  if (base == nullptr) return 1;
  std::memset(base, 1, bytes);
  if (set_mempolicy(MPOL_DEFAULT, nullptr, 0) != 0) {
    std::fprintf(stderr, "lab_memhog: set_mempolicy: %s\n",
                 std::strerror(errno));
    return 1;
  }
  long on_touch = PagesOnNode(base, pages, page_size, mem_node);
  if (on_touch < 0) return 1;
  if (on_touch < static_cast<long>(kMinTouchShare * pages)) {
    std::fprintf(stderr, "lab_memhog: only %ld of %zu pages on node %d\n",
                 on_touch, pages, mem_node);
    return 1;
  }
  std::fprintf(stderr, "lab_memhog: %ld of %zu pages on node %d\n", on_touch,
               pages, mem_node);
  long long huge_kib = options->thp ? AnonHugeKib(base, bytes) : 0;
  if (huge_kib < 0) return 1;
  if (!options->wait_for.empty()) {
    std::printf("touched\n");
    std::fflush(stdout);
    while (access(options->wait_for.c_str(), F_OK) != 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  if (!RunOnNode(options->run_node)) return 1;
  prctl(PR_SET_NAME, "lab_memhog");
  std::printf("ready\n");
  if (options->thp) {
    // Measured right after the touch, before the work passes: what the
    // kernel gave at first touch, the placement the scenario starts from.
    std::printf("anon_huge_kib %lld\n", static_cast<long long>(huge_kib));
  }
  std::fflush(stdout);

  // One read-modify-write per page per pass: every page is referenced in
  // every pass, which is what hinting faults need; no cache line is worked
  // on more than that, so a pass stays short even under emulation.
  // --hot_mb: the pages the passes use; the others stay as touched.
  const size_t hot_pages =
      options->hot_mb < 0
          ? pages
          : (static_cast<size_t>(options->hot_mb) << 20) / page_size;
  const auto period = std::chrono::milliseconds(options->report_ms);
  auto next_report = Clock::now() + period;
  uint64_t passes = 0;
  for (;;) {
    if (hot_pages == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (size_t i = 0; i < hot_pages; ++i) {
      volatile char* p = base + i * page_size;
      *p = static_cast<char>(*p + 1);
    }
    ++passes;
    if (options->report_ms == 0) continue;
    auto now = Clock::now();
    if (now >= next_report) {
      std::printf("passes %llu\n", static_cast<unsigned long long>(passes));
      std::fflush(stdout);
      next_report = now + period;
    }
  }
}
