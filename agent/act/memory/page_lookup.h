// The page lookup of a migration pass: which ranges a pass walks, the next
// chunk of units from a cursor, and where a chunk's units are (move_pages(2)
// without nodes). Where the page frames can be read (PageOps::Frames) a unit
// is a whole THP, one address for its 2 MiB (move_pages moves it whole
// anyway), or a present base page; elsewhere every base page of the ranges
// is a unit, as before huge pages were told apart.
#ifndef LOCUS_AGENT_ACT_MEMORY_PAGE_LOOKUP_H_
#define LOCUS_AGENT_ACT_MEMORY_PAGE_LOOKUP_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "agent/act/kernel_ops.h"
#include "agent/act/memory/huge_pages.h"

namespace locus {

// Not thread-safe (it keeps read buffers): one per migrator.
class PageLookup {
 public:
  // `ops` is borrowed. At most `chunk_pages` units per query.
  PageLookup(PageOps* ops, size_t chunk_pages);

  // The ranges a pass walks, read when it starts; 0 or an errno (ESRCH: the
  // process is gone).
  int Ranges(int32_t pid, std::vector<MemRange>* ranges);
  // Collects up to chunk_pages units from `cursor` on into *units, and when
  // `max_pages` > 0 no more once they span that many base pages (what the
  // caller may still move: a chunk of 256 huge pages would be 512 MiB
  // looked up for a grant of 16); *next is the address after the last one
  // taken, or 0 when the ranges are exhausted. 0 or an errno (ESRCH: the
  // process is gone).
  int Chunk(int32_t pid, const std::vector<MemRange>& ranges, uint64_t cursor,
            uint64_t max_pages, std::vector<PageUnit>* units, uint64_t* next);
  // Where each unit is: status[i] = node or -errno; 0 or the call's errno.
  int Query(int32_t pid, const std::vector<PageUnit>& units,
            std::vector<int>* status);
  // Moves each unit (a THP whole, by its one address) to `node`: status[i]
  // = its node now or -errno; 0 or the call's errno.
  int Move(int32_t pid, const std::vector<PageUnit>& units, int node,
           std::vector<int>* status);
  uint64_t page_size() const { return page_size_; }

 private:
  // move_pages over the units' addresses, querying when `node` < 0.
  int Call(int32_t pid, const std::vector<PageUnit>& units, int node,
           std::vector<int>* status);
  // Every base page of the ranges from `cursor`, present or not, at most
  // `max_units`.
  uint64_t BasePages(const std::vector<MemRange>& ranges, uint64_t cursor,
                     size_t max_units, std::vector<PageUnit>* units) const;

  PageOps* ops_;
  size_t chunk_pages_;
  uint64_t page_size_;
  std::unique_ptr<PageUnitLookup> frames_;  // null: base pages only
  std::vector<void*> addrs_;                // the call's addresses
  std::vector<int> nodes_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_MEMORY_PAGE_LOOKUP_H_
