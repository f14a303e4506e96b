#include "agent/act/memory/page_lookup.h"

#include <algorithm>
#include <cerrno>

namespace locus {

PageLookup::PageLookup(PageOps* ops, size_t chunk_pages)
    : ops_(ops),
      chunk_pages_(std::max<size_t>(chunk_pages, 1)),
      page_size_(ops->PageSize()) {
  if (PageFrameReader* reader = ops->Frames(); reader != nullptr) {
    frames_ = std::make_unique<PageUnitLookup>(reader, page_size_);
  }
}

int PageLookup::Ranges(int32_t pid, std::vector<MemRange>* ranges) {
  // A new pass reads the frames afresh, not from the last pass's window.
  if (frames_ != nullptr) frames_->Forget();
  return ops_->Ranges(pid, ranges);
}

int PageLookup::Chunk(int32_t pid, const std::vector<MemRange>& ranges,
                      uint64_t cursor, uint64_t max_pages,
                      std::vector<PageUnit>* units, uint64_t* next) {
  if (frames_ != nullptr) {
    int err = frames_->Next(pid, ranges, cursor, chunk_pages_, max_pages, units,
                            next);
    if (err == 0) return 0;
    if (err == ESRCH || err == ENOENT) return ESRCH;  // the task is gone
    // The frame files cannot be read (kpageflags closed to us): walk by
    // base page from now on, which moves the same pages, 512 entries a THP.
    frames_.reset();
  }
  const size_t max_units = max_pages > 0
                               ? std::min<uint64_t>(chunk_pages_, max_pages)
                               : chunk_pages_;
  *next = BasePages(ranges, cursor, max_units, units);
  return 0;
}

uint64_t PageLookup::BasePages(const std::vector<MemRange>& ranges,
                               uint64_t cursor, size_t max_units,
                               std::vector<PageUnit>* units) const {
  units->clear();
  for (const MemRange& range : ranges) {
    if (range.end <= cursor) continue;
    uint64_t addr = std::max(range.start, cursor);
    addr -= addr % page_size_;
    for (; addr < range.end; addr += page_size_) {
      if (units->size() == max_units) return addr;
      units->push_back(PageUnit{.addr = addr, .pages = 1});
    }
  }
  return 0;
}

int PageLookup::Query(int32_t pid, const std::vector<PageUnit>& units,
                      std::vector<int>* status) {
  return Call(pid, units, -1, status);
}

int PageLookup::Move(int32_t pid, const std::vector<PageUnit>& units, int node,
                     std::vector<int>* status) {
  return Call(pid, units, node, status);
}

int PageLookup::Call(int32_t pid, const std::vector<PageUnit>& units, int node,
                     std::vector<int>* status) {
  addrs_.clear();
  for (const PageUnit& unit : units) {
    addrs_.push_back(reinterpret_cast<void*>(unit.addr));
  }
  nodes_.assign(units.size(), node);
  status->assign(units.size(), 0);
  return ops_->MovePages(pid, addrs_.size(), addrs_.data(),
                         node < 0 ? nullptr : nodes_.data(), status->data());
}

}  // namespace locus
