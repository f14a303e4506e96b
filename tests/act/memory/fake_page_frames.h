// In-memory page-frame files for tests of code above PageUnitLookup (the
// page mover): what /proc/PID/pagemap and /proc/kpageflags would say, set
// page by page or a huge page at a time, with the reads counted.
#ifndef LOCUS_TESTS_ACT_MEMORY_FAKE_PAGE_FRAMES_H_
#define LOCUS_TESTS_ACT_MEMORY_FAKE_PAGE_FRAMES_H_

#include <cerrno>
#include <cstdint>
#include <map>

#include "agent/act/memory/huge_pages.h"

namespace locus {

class FakePageFrames : public PageFrameReader {
 public:
  static constexpr uint64_t kPresent = uint64_t{1} << 63;
  static constexpr uint64_t kHead = uint64_t{1} << 15;
  static constexpr uint64_t kTail = uint64_t{1} << 16;
  static constexpr uint64_t kThp = uint64_t{1} << 22;

  explicit FakePageFrames(uint64_t page_size = 4096) : page_size_(page_size) {}

  // A present base page of `pid` at `addr` in frame `pfn`.
  void Page(int32_t pid, uint64_t addr, uint64_t pfn) {
    pagemap[pid][addr / page_size_] = kPresent | pfn;
  }
  // A THP of `pid` at `addr` (2 MiB-aligned) in frames [pfn, pfn + 512).
  void HugePage(int32_t pid, uint64_t addr, uint64_t pfn) {
    for (uint64_t k = 0; k < kPagesPerHugePage; ++k) {
      Page(pid, addr + k * page_size_, pfn + k);
      flags[pfn + k] = kThp | (k == 0 ? kHead : kTail);
    }
  }

  int Pagemap(int32_t pid, uint64_t first_page, size_t count,
              uint64_t* entries) override {
    ++pagemap_reads;
    auto process = pagemap.find(pid);
    if (process == pagemap.end()) return ESRCH;
    for (size_t i = 0; i < count; ++i) {
      auto entry = process->second.find(first_page + i);
      entries[i] = entry == process->second.end() ? 0 : entry->second;
    }
    return 0;
  }
  int PageFlags(uint64_t first_pfn, size_t count, uint64_t* out) override {
    ++flag_reads;
    for (size_t i = 0; i < count; ++i) {
      auto entry = flags.find(first_pfn + i);
      out[i] = entry == flags.end() ? 0 : entry->second;
    }
    return 0;
  }

  std::map<int32_t, std::map<uint64_t, uint64_t>> pagemap;  // pid, vpn
  std::map<uint64_t, uint64_t> flags;                       // pfn
  int pagemap_reads = 0, flag_reads = 0;

 private:
  uint64_t page_size_;
};

}  // namespace locus

#endif  // LOCUS_TESTS_ACT_MEMORY_FAKE_PAGE_FRAMES_H_
