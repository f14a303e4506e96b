#include "agent/act/memory/huge_pages.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/host/file_util.h"
#include "common/unique_fd.h"

namespace locus {
namespace {

// pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst).
constexpr uint64_t kPresent = uint64_t{1} << 63;
constexpr uint64_t kPfnMask = (uint64_t{1} << 55) - 1;
// kpageflags bits (include/uapi/linux/kernel-page-flags.h).
constexpr uint64_t kCompoundHead = uint64_t{1} << 15;
constexpr uint64_t kCompoundTail = uint64_t{1} << 16;
constexpr uint64_t kThp = uint64_t{1} << 22;
// Huge pages whose flags one read covers at most (256 KiB of flags): a run
// of adjacent frames longer than this is read in several.
constexpr size_t kMaxFlagRun = 64;

bool Present(uint64_t entry) { return (entry & kPresent) != 0; }
uint64_t Pfn(uint64_t entry) { return entry & kPfnMask; }

// Whether the pagemap entries of an aligned 2 MiB block map 512 consecutive
// frames from an aligned one: what a PMD-mapped THP looks like, and only a
// candidate until kpageflags says the frames are one huge page.
bool MapsOneBlock(const uint64_t* entries) {
  const uint64_t pfn = Pfn(entries[0]);
  if (!Present(entries[0]) || pfn == 0 || pfn % kPagesPerHugePage != 0) {
    return false;
  }
  for (uint32_t k = 1; k < kPagesPerHugePage; ++k) {
    if (!Present(entries[k]) || Pfn(entries[k]) != pfn + k) return false;
  }
  return true;
}

// Whether 512 frames' flags are one THP: the first its head, the rest its
// tails (a smaller folio would put a head or a plain page among them).
bool IsOneHugePage(const uint64_t* flags) {
  if ((flags[0] & (kThp | kCompoundHead)) != (kThp | kCompoundHead)) {
    return false;
  }
  for (uint32_t k = 1; k < kPagesPerHugePage; ++k) {
    if ((flags[k] & kCompoundTail) == 0) return false;
  }
  return true;
}

// One pread of `count` 64-bit words at word `first` of the file; a short
// read leaves the rest as it was (zeros).
int ReadWords(int fd, uint64_t first, size_t count, uint64_t* words) {
  char* out = reinterpret_cast<char*>(words);
  size_t want = count * sizeof(uint64_t), got = 0;
  const off_t offset = static_cast<off_t>(first * sizeof(uint64_t));
  while (got < want) {
    ssize_t n = pread(fd, out + got, want - got, offset + got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  return 0;
}

class ProcPageFrameReader : public PageFrameReader {
 public:
  explicit ProcPageFrameReader(std::string procfs_root)
      : procfs_root_(std::move(procfs_root)),
        kpageflags_(open(JoinPath(procfs_root_, "/kpageflags").c_str(),
                         O_RDONLY | O_CLOEXEC)),
        kpageflags_errno_(kpageflags_.get() < 0 ? errno : 0) {}

  int Pagemap(int32_t pid, uint64_t first_page, size_t count,
              uint64_t* entries) override {
    // Opened per read: a pid is a name that can be reused, and a file kept
    // open would read an exited task's empty map.
    const std::string path =
        JoinPath(procfs_root_, absl::StrCat("/", pid, "/pagemap"));
    UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) return errno;
    return ReadWords(fd.get(), first_page, count, entries);
  }

  int PageFlags(uint64_t first_pfn, size_t count, uint64_t* flags) override {
    if (kpageflags_.get() < 0) return kpageflags_errno_;
    return ReadWords(kpageflags_.get(), first_pfn, count, flags);
  }

 private:
  std::string procfs_root_;
  UniqueFd kpageflags_;  // pread is safe to share between threads
  int kpageflags_errno_;
};

}  // namespace

std::unique_ptr<PageFrameReader> MakeProcPageFrameReader(
    std::string procfs_root) {
  return std::make_unique<ProcPageFrameReader>(std::move(procfs_root));
}

PageUnitLookup::PageUnitLookup(PageFrameReader* reader, uint64_t page_size,
                               size_t window_pages)
    : reader_(reader),
      page_size_(page_size),
      window_pages_(std::max<size_t>(
          kPagesPerHugePage, (window_pages + kPagesPerHugePage - 1) /
                                 kPagesPerHugePage * kPagesPerHugePage)) {}

int PageUnitLookup::Next(int32_t pid, const std::vector<MemRange>& ranges,
                         uint64_t cursor, size_t max_units, uint64_t max_pages,
                         std::vector<PageUnit>* units, uint64_t* next) {
  units->clear();
  *next = 0;
  uint64_t pages = 0;
  auto full = [&] {
    return units->size() == max_units || (max_pages > 0 && pages >= max_pages);
  };
  const uint64_t window_bytes = window_pages_ * page_size_;
  const uint64_t huge_bytes = kPagesPerHugePage * page_size_;
  for (const MemRange& range : ranges) {
    if (range.end <= cursor) continue;
    uint64_t start = std::max(range.start, cursor);
    start -= start % page_size_;
    while (start < range.end) {
      if (full()) {
        *next = start;
        return 0;
      }
      if (!Holds(pid, range, start)) {
        // A window ends on a huge-page boundary where it can, so that no
        // huge page straddles two windows.
        uint64_t end = std::min(range.end, start + window_bytes);
        if (uint64_t aligned = end - end % huge_bytes;
            end < range.end && aligned > start) {
          end = aligned;
        }
        if (int err = Read(pid, start, end); err != 0) return err;
      }
      auto unit = std::lower_bound(
          window_units_.begin(), window_units_.end(), start,
          [](const PageUnit& u, uint64_t addr) { return u.addr < addr; });
      for (; unit != window_units_.end(); ++unit) {
        if (full()) {
          *next = units->back().addr + UnitBytes(units->back(), page_size_);
          return 0;
        }
        units->push_back(*unit);
        pages += unit->pages;
      }
      start = window_end_;
    }
  }
  return 0;
}

bool PageUnitLookup::Holds(int32_t pid, const MemRange& range,
                           uint64_t start) const {
  return window_pid_ == pid && window_start_ <= start && start < window_end_ &&
         range.start <= window_start_ && window_end_ <= range.end;
}

int PageUnitLookup::Read(int32_t pid, uint64_t start, uint64_t end) {
  window_pid_ = 0;
  window_units_.clear();
  const uint64_t first = start / page_size_;
  const size_t n = (end - start) / page_size_;
  entries_.assign(n, 0);
  if (int err = reader_->Pagemap(pid, first, n, entries_.data()); err != 0) {
    return err;
  }
  std::vector<size_t> candidates;
  const size_t first_aligned =
      (kPagesPerHugePage - first % kPagesPerHugePage) % kPagesPerHugePage;
  for (size_t i = first_aligned; i + kPagesPerHugePage <= n;
       i += kPagesPerHugePage) {
    if (MapsOneBlock(&entries_[i])) candidates.push_back(i);
  }
  if (int err = ConfirmHuge(candidates); err != 0) return err;
  size_t next_candidate = 0;
  for (size_t i = 0; i < n;) {
    const uint64_t addr = start + i * page_size_;
    if (next_candidate < candidates.size() && candidates[next_candidate] == i &&
        huge_[next_candidate++]) {
      window_units_.push_back({addr, kPagesPerHugePage});
      i += kPagesPerHugePage;
      continue;
    }
    if (Present(entries_[i])) window_units_.push_back({addr, 1});
    ++i;
  }
  window_pid_ = pid;
  window_start_ = start;
  window_end_ = end;
  return 0;
}

int PageUnitLookup::ConfirmHuge(const std::vector<size_t>& candidates) {
  huge_.assign(candidates.size(), false);
  for (size_t run = 0; run < candidates.size();) {
    // A run of candidates whose frames follow each other: one read.
    const uint64_t first_pfn = Pfn(entries_[candidates[run]]);
    size_t length = 1;
    while (run + length < candidates.size() && length < kMaxFlagRun &&
           Pfn(entries_[candidates[run + length]]) ==
               first_pfn + length * kPagesPerHugePage) {
      ++length;
    }
    flags_.assign(length * kPagesPerHugePage, 0);
    if (int err = reader_->PageFlags(first_pfn, flags_.size(), flags_.data());
        err != 0) {
      return err;
    }
    for (size_t k = 0; k < length; ++k) {
      huge_[run + k] = IsOneHugePage(&flags_[k * kPagesPerHugePage]);
    }
    run += length;
  }
  return 0;
}

uint64_t MovedBytes(const std::vector<PageUnit>& units, const int* status,
                    int to_node, uint64_t page_size) {
  uint64_t bytes = 0;
  for (size_t i = 0; i < units.size(); ++i) {
    if (status[i] == to_node) bytes += UnitBytes(units[i], page_size);
  }
  return bytes;
}

}  // namespace locus
