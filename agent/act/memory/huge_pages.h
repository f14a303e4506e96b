// Transparent huge pages in the page mover's walk. move_pages(2) on any
// address of a THP moves the whole 2 MiB, so the walk looks up and moves one
// unit per huge page (its first address) and one per base page elsewhere,
// and charges its MiB/s budget the bytes the kernel really moved.
//
// Huge pages are identified exactly from the kernel, not guessed from
// alignment: /proc/PID/pagemap gives each page's frame (PFN; root only) and
// presence, /proc/kpageflags each frame's flags (KPF_THP, compound head and
// tail). Both are read in bulk: one pread per window of a range for the
// pagemap, one per run of adjacent huge pages for the flags, never one per
// page. Without the PFNs (no CAP_SYS_ADMIN: the kernel reports 0) every
// present page is a base-page unit, which is the walk without this.
#ifndef LOCUS_AGENT_ACT_MEMORY_HUGE_PAGES_H_
#define LOCUS_AGENT_ACT_MEMORY_HUGE_PAGES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agent/host/proc_parse.h"  // MemRange

namespace locus {

// Base pages per PMD-sized transparent huge page (2 MiB of 4 KiB pages).
inline constexpr uint32_t kPagesPerHugePage = 512;

// What one move_pages entry stands for.
struct PageUnit {
  uint64_t addr = 0;   // its first byte: a THP's is 2 MiB-aligned
  uint32_t pages = 1;  // base pages: 1, or kPagesPerHugePage for a THP

  bool operator==(const PageUnit&) const = default;
};

// The kernel's page-frame files, behind an interface so that tests give
// fixture contents. Methods return 0 or an errno (ESRCH or ENOENT: the task
// is gone); a read past the end of a file leaves the rest zeros (absent
// pages, no flags).
class PageFrameReader {
 public:
  virtual ~PageFrameReader() = default;
  // /proc/PID/pagemap entries of virtual pages [first_page, +count), one
  // read: bit 63 present, bits 0-54 the PFN.
  virtual int Pagemap(int32_t pid, uint64_t first_page, size_t count,
                      uint64_t* entries) = 0;
  // /proc/kpageflags words of frames [first_pfn, +count), one read.
  virtual int PageFlags(uint64_t first_pfn, size_t count, uint64_t* flags) = 0;
};

// Reads <procfs_root>/PID/pagemap and <procfs_root>/kpageflags.
std::unique_ptr<PageFrameReader> MakeProcPageFrameReader(
    std::string procfs_root);

// Not thread-safe (it keeps its read buffers): one per mover thread; the
// reader under it may be shared (its reads are preads).
class PageUnitLookup {
 public:
  // `reader` is borrowed. `window_pages`: pagemap entries per read, rounded
  // up to a whole number of huge pages.
  PageUnitLookup(PageFrameReader* reader, uint64_t page_size,
                 size_t window_pages = 4096);

  // Like the migrator's chunk walk: the units of the present pages of
  // `ranges` (ascending) from `cursor` on, in address order, at most
  // `max_units` (> 0) of them and, when `max_pages` > 0, no more once they
  // span max_pages base pages (the first unit is always taken), into *units;
  // *next is the address after the last unit taken, or 0 when the ranges
  // are exhausted. Absent and swapped pages make no unit (move_pages would
  // say ENOENT). 0 or the reader's errno; on error *units holds what was
  // found before it.
  int Next(int32_t pid, const std::vector<MemRange>& ranges, uint64_t cursor,
           size_t max_units, uint64_t max_pages, std::vector<PageUnit>* units,
           uint64_t* next);

  // Drops the window kept from the last read: the next Next reads afresh.
  // Called when a pass starts (its mappings were read again).
  void Forget() { window_pid_ = 0; }

 private:
  // Whether the kept window covers `start` of `range` for `pid`.
  bool Holds(int32_t pid, const MemRange& range, uint64_t start) const;
  // Reads [start, end) (within one range, at most one window) and keeps its
  // units as the window. 0 or errno (nothing kept).
  int Read(int32_t pid, uint64_t start, uint64_t end);
  // Of the candidates (indexes into entries_ of blocks whose pagemap maps
  // 512 consecutive frames from an aligned one), keeps in huge_ those whose
  // frames kpageflags says are one THP. 0 or errno.
  int ConfirmHuge(const std::vector<size_t>& candidates);

  PageFrameReader* reader_;
  uint64_t page_size_;
  size_t window_pages_;
  std::vector<uint64_t> entries_;  // the window's pagemap
  std::vector<uint64_t> flags_;
  std::vector<bool> huge_;  // per candidate of the window: a THP
  // The last window read, decoded. The migrator asks for a chunk (256
  // units) at a time, far fewer than a window's pages: without it each
  // window would be read once per chunk in it (16 times for base pages).
  int32_t window_pid_ = 0;  // 0: none kept
  uint64_t window_start_ = 0, window_end_ = 0;
  std::vector<PageUnit> window_units_;
};

// Bytes a unit spans.
inline uint64_t UnitBytes(const PageUnit& unit, uint64_t page_size) {
  return uint64_t{unit.pages} * page_size;
}

// Bytes the kernel moved in a moving move_pages call over `units` whose
// status array (one entry per unit) came back as `status`: every unit that
// now is on `to_node` counts whole, a THP its 2 MiB. This is what the MiB/s
// bucket is charged.
uint64_t MovedBytes(const std::vector<PageUnit>& units, const int* status,
                    int to_node, uint64_t page_size);

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_MEMORY_HUGE_PAGES_H_
