#include "agent/act/page_lookup.h"

#include <algorithm>

namespace locus {

PageLookup::PageLookup(PageOps* ops, size_t chunk_pages)
    : ops_(ops),
      chunk_pages_(std::max<size_t>(chunk_pages, 1)),
      page_size_(ops->PageSize()) {}

int PageLookup::Ranges(int32_t pid, std::vector<MemRange>* ranges) const {
  return ops_->Ranges(pid, ranges);
}

uint64_t PageLookup::Chunk(const std::vector<MemRange>& ranges, uint64_t cursor,
                           std::vector<void*>* pages) const {
  pages->clear();
  for (const MemRange& range : ranges) {
    if (range.end <= cursor) continue;
    uint64_t addr = std::max(range.start, cursor);
    addr -= addr % page_size_;
    for (; addr < range.end; addr += page_size_) {
      if (pages->size() == chunk_pages_) return addr;
      pages->push_back(reinterpret_cast<void*>(addr));
    }
  }
  return 0;
}

int PageLookup::Query(int32_t pid, std::vector<void*>& pages,
                      std::vector<int>* status) const {
  status->assign(pages.size(), 0);
  return ops_->MovePages(pid, pages.size(), pages.data(), nullptr,
                         status->data());
}

}  // namespace locus
