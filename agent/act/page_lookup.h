// The page lookup of a migration pass, in one place so that another lookup
// (one that sees huge pages and steps over them whole) can replace it: which
// ranges a pass walks, the next chunk of page addresses from a cursor, and
// where a chunk's pages are (move_pages(2) without nodes).
#ifndef LOCUS_AGENT_ACT_PAGE_LOOKUP_H_
#define LOCUS_AGENT_ACT_PAGE_LOOKUP_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "agent/act/kernel_ops.h"

namespace locus {

class PageLookup {
 public:
  // `ops` is borrowed. At most `chunk_pages` pages per query.
  PageLookup(PageOps* ops, size_t chunk_pages);

  // The ranges a pass walks; 0 or an errno (ESRCH: the process is gone).
  int Ranges(int32_t pid, std::vector<MemRange>* ranges) const;
  // Collects up to chunk_pages page addresses from `cursor` on; returns the
  // address after the last one taken, or 0 when the ranges are exhausted.
  uint64_t Chunk(const std::vector<MemRange>& ranges, uint64_t cursor,
                 std::vector<void*>* pages) const;
  // Where each page is: status[i] = node or -errno; 0 or the call's errno.
  int Query(int32_t pid, std::vector<void*>& pages,
            std::vector<int>* status) const;
  uint64_t page_size() const { return page_size_; }

 private:
  PageOps* ops_;
  size_t chunk_pages_;
  uint64_t page_size_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_PAGE_LOOKUP_H_
