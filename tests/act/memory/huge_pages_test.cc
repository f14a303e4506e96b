// The huge-page-aware lookup over fixture page-frame files: pagemap and
// kpageflags contents written, as the kernel lays them out, under a scratch
// procfs root and read by the real reader.
#include "agent/act/memory/huge_pages.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/memory/fake_page_frames.h"
#include "tests/host/temp_tree.h"

namespace locus {
namespace {

using ::testing::ElementsAre;

constexpr uint64_t kPage = 4096;
constexpr uint64_t kHuge = kPagesPerHugePage * kPage;
constexpr int32_t kPid = 42;
constexpr uint64_t kBase = 0x40000000;  // 2 MiB-aligned
constexpr uint64_t kPresent = uint64_t{1} << 63;
constexpr uint64_t kHead = uint64_t{1} << 15, kTail = uint64_t{1} << 16,
                   kThp = uint64_t{1} << 22;

// Writes 64-bit words at word offsets of files under a TempTree.
class FakeProc {
 public:
  FakeProc() {
    tree_.Write("42/pagemap", "");
    tree_.Write("kpageflags", "");
  }
  const std::string& root() const { return tree_.root(); }
  void Page(uint64_t addr, uint64_t pfn) {
    Put("42/pagemap", addr / kPage, kPresent | pfn);
  }
  // A THP at addr: 512 consecutive frames from `pfn`, one compound page.
  void HugePage(uint64_t addr, uint64_t pfn) {
    for (uint64_t k = 0; k < kPagesPerHugePage; ++k) {
      Page(addr + k * kPage, pfn + k);
      Put("kpageflags", pfn + k, k == 0 ? (kHead | kThp) : (kTail | kThp));
    }
  }
  // 512 consecutive frames that are not one THP: order-0 pages, or folios
  // of `folio_pages` each (multi-size THP).
  void ContiguousBlock(uint64_t addr, uint64_t pfn, uint64_t folio_pages) {
    for (uint64_t k = 0; k < kPagesPerHugePage; ++k) {
      Page(addr + k * kPage, pfn + k);
      uint64_t flags = 0;
      if (folio_pages > 1) {
        flags = kThp | (k % folio_pages == 0 ? kHead : kTail);
      }
      Put("kpageflags", pfn + k, flags);
    }
  }
  void Remove(const std::string& relative) { tree_.Remove(relative); }

 private:
  void Put(const std::string& relative, uint64_t word, uint64_t value) {
    int fd = open((tree_.root() + "/" + relative).c_str(), O_WRONLY);
    ASSERT_GE(fd, 0) << relative;
    ASSERT_EQ(pwrite(fd, &value, sizeof(value), word * sizeof(value)),
              static_cast<ssize_t>(sizeof(value)));
    close(fd);
  }
  TempTree tree_;
};

// The real reader, counting its reads.
class CountingReader : public PageFrameReader {
 public:
  explicit CountingReader(const std::string& root)
      : real_(MakeProcPageFrameReader(root)) {}
  int Pagemap(int32_t pid, uint64_t first_page, size_t count,
              uint64_t* entries) override {
    ++pagemap_reads;
    return real_->Pagemap(pid, first_page, count, entries);
  }
  int PageFlags(uint64_t first_pfn, size_t count, uint64_t* flags) override {
    ++flag_reads;
    return real_->PageFlags(first_pfn, count, flags);
  }
  int pagemap_reads = 0, flag_reads = 0;

 private:
  std::unique_ptr<PageFrameReader> real_;
};

class HugePagesTest : public ::testing::Test {
 protected:
  // Every unit of `ranges`, `max` at a time, resuming from each call's end.
  std::vector<PageUnit> WalkAll(PageUnitLookup& lookup,
                                const std::vector<MemRange>& ranges,
                                size_t max) {
    std::vector<PageUnit> all, units;
    uint64_t cursor = 0, next = 0;
    for (int calls = 0; calls < 10000; ++calls) {
      EXPECT_EQ(lookup.Next(kPid, ranges, cursor, max, 0, &units, &next), 0);
      EXPECT_LE(units.size(), max);
      all.insert(all.end(), units.begin(), units.end());
      if (next == 0) break;
      cursor = next;
    }
    return all;
  }

  FakeProc proc_;
  CountingReader reader_{proc_.root()};
};

TEST_F(HugePagesTest, OneUnitPerHugePageAndPerPresentBasePage) {
  proc_.HugePage(kBase, 0x10000);
  proc_.Page(kBase + kHuge, 0x5);  // then base pages, some absent
  proc_.Page(kBase + kHuge + 7 * kPage, 0x9);
  proc_.HugePage(kBase + 2 * kHuge, 0x10200);
  PageUnitLookup lookup(&reader_, kPage);
  std::vector<PageUnit> units;
  uint64_t next = 1;
  ASSERT_EQ(
      lookup.Next(kPid, {{kBase, kBase + 3 * kHuge}}, 0, 100, 0, &units, &next),
      0);
  EXPECT_THAT(units,
              ElementsAre(PageUnit{kBase, kPagesPerHugePage},
                          PageUnit{kBase + kHuge, 1},
                          PageUnit{kBase + kHuge + 7 * kPage, 1},
                          PageUnit{kBase + 2 * kHuge, kPagesPerHugePage}));
  EXPECT_EQ(next, 0u);  // the ranges are exhausted
  // In bulk: one pagemap read for the window, one flags read for the two
  // huge pages, whose frames are adjacent.
  EXPECT_EQ(reader_.pagemap_reads, 1);
  EXPECT_EQ(reader_.flag_reads, 1);
}

TEST_F(HugePagesTest, ContiguousFramesThatAreNotOneHugePageAreBasePages) {
  proc_.ContiguousBlock(kBase, 0x20000, 1);           // order-0 pages
  proc_.ContiguousBlock(kBase + kHuge, 0x20200, 16);  // 64 KiB folios
  PageUnitLookup lookup(&reader_, kPage);
  std::vector<PageUnit> units;
  uint64_t next = 1;
  ASSERT_EQ(lookup.Next(kPid, {{kBase, kBase + 2 * kHuge}}, 0, 5000, 0, &units,
                        &next),
            0);
  ASSERT_EQ(units.size(), 2 * kPagesPerHugePage);
  for (size_t i = 0; i < units.size(); ++i) {
    EXPECT_EQ(units[i], (PageUnit{kBase + i * kPage, 1})) << i;
  }
}

TEST_F(HugePagesTest, FramesNotInOrderOrNotVisibleAreBasePages) {
  // Frames 0 (what the kernel shows without CAP_SYS_ADMIN), and a block
  // whose frames are consecutive but start off a 2 MiB frame boundary.
  for (uint64_t k = 0; k < kPagesPerHugePage; ++k) {
    proc_.Page(kBase + k * kPage, 0);
    proc_.Page(kBase + kHuge + k * kPage, 0x30001 + k);
  }
  PageUnitLookup lookup(&reader_, kPage);
  std::vector<PageUnit> units =
      WalkAll(lookup, {{kBase, kBase + 2 * kHuge}}, 2 * kPagesPerHugePage);
  EXPECT_EQ(units.size(), 2 * kPagesPerHugePage);
  EXPECT_EQ(reader_.flag_reads, 0);  // no candidate: no flags read
}

TEST_F(HugePagesTest, AHugePageOnlyPartlyInTheRangeIsNotOneUnit) {
  proc_.HugePage(kBase, 0x10000);
  PageUnitLookup lookup(&reader_, kPage);
  std::vector<PageUnit> units =
      WalkAll(lookup, {{kBase + 256 * kPage, kBase + kHuge}}, 1000);
  EXPECT_EQ(units.size(), 256u);
  EXPECT_EQ(units.front(), (PageUnit{kBase + 256 * kPage, 1}));
}

TEST_F(HugePagesTest, ResumesWhereMaxUnitsStoppedIt) {
  proc_.HugePage(kBase, 0x10000);
  proc_.Page(kBase + kHuge + 3 * kPage, 0x7);
  proc_.HugePage(kBase + 2 * kHuge, 0x40000);  // not adjacent: its own read
  proc_.HugePage(kBase + 8 * kHuge, 0x10200);  // a second range
  const std::vector<MemRange> ranges = {{kBase, kBase + 3 * kHuge},
                                        {kBase + 8 * kHuge, kBase + 9 * kHuge}};
  PageUnitLookup lookup(&reader_, kPage);
  std::vector<PageUnit> units;
  uint64_t next = 0;
  ASSERT_EQ(lookup.Next(kPid, ranges, 0, 2, 0, &units, &next), 0);
  EXPECT_THAT(units, ElementsAre(PageUnit{kBase, kPagesPerHugePage},
                                 PageUnit{kBase + kHuge + 3 * kPage, 1}));
  EXPECT_EQ(next, kBase + kHuge + 4 * kPage);
  ASSERT_EQ(lookup.Next(kPid, ranges, next, 2, 0, &units, &next), 0);
  EXPECT_THAT(units,
              ElementsAre(PageUnit{kBase + 2 * kHuge, kPagesPerHugePage},
                          PageUnit{kBase + 8 * kHuge, kPagesPerHugePage}));
  EXPECT_EQ(next, 0u);
  EXPECT_EQ(WalkAll(lookup, ranges, 1).size(), 4u);
}

TEST_F(HugePagesTest, AWindowIsReadOnceWhateverTheChunk) {
  // 4096 present base pages and a huge page after them: the migrator's
  // chunks of 256 units take the first window (4096 pages) in 16 calls.
  for (uint64_t k = 0; k < 4096; ++k)
    proc_.Page(kBase + k * kPage, 0x70000 + 2 * k);
  proc_.HugePage(kBase + 4096 * kPage, 0x100000);
  const std::vector<MemRange> ranges = {{kBase, kBase + 4096 * kPage + kHuge}};
  PageUnitLookup lookup(&reader_, kPage);
  std::vector<PageUnit> units = WalkAll(lookup, ranges, 256);
  ASSERT_EQ(units.size(), 4097u);
  EXPECT_EQ(units.back(), (PageUnit{kBase + 4096 * kPage, kPagesPerHugePage}));
  EXPECT_EQ(reader_.pagemap_reads, 2);  // the two windows, each once
  EXPECT_EQ(reader_.flag_reads, 1);
  // A new pass reads again (the frames may have changed since).
  lookup.Forget();
  uint64_t next = 0;
  ASSERT_EQ(lookup.Next(kPid, ranges, 0, 256, 0, &units, &next), 0);
  EXPECT_EQ(reader_.pagemap_reads, 3);
  ASSERT_EQ(lookup.Next(kPid, ranges, next, 256, 0, &units, &next), 0);
  EXPECT_EQ(reader_.pagemap_reads, 3);  // on in the window kept
  // A cursor before the window kept (a batch to be found again) reads.
  ASSERT_EQ(lookup.Next(kPid, {{kBase - kHuge, kBase + kHuge}}, kBase - kHuge,
                        256, 0, &units, &next),
            0);
  EXPECT_EQ(reader_.pagemap_reads, 4);
  EXPECT_EQ(units.front(), (PageUnit{kBase, 1}));
}

TEST_F(HugePagesTest, SmallWindowsStillSeeEveryHugePage) {
  // Windows of one huge page each, over a range that starts off a huge-page
  // boundary: windows realign, and no huge page straddles two.
  proc_.Page(kBase + kHuge - kPage, 0x3);
  for (uint64_t i = 1; i <= 5; ++i) {
    proc_.HugePage(kBase + i * kHuge, 0x10000 + i * kPagesPerHugePage);
  }
  PageUnitLookup lookup(&reader_, kPage, /*window_pages=*/1);
  std::vector<PageUnit> units =
      WalkAll(lookup, {{kBase + kHuge - kPage, kBase + 6 * kHuge}}, 3);
  ASSERT_EQ(units.size(), 6u);
  EXPECT_EQ(units[0], (PageUnit{kBase + kHuge - kPage, 1}));
  for (uint64_t i = 1; i <= 5; ++i) {
    EXPECT_EQ(units[i], (PageUnit{kBase + i * kHuge, kPagesPerHugePage})) << i;
  }
}

TEST_F(HugePagesTest, SaysWhenTheTaskOrTheFlagsAreGone) {
  proc_.HugePage(kBase, 0x10000);
  std::vector<PageUnit> units;
  uint64_t next = 0;
  {
    proc_.Remove("kpageflags");
    CountingReader reader(proc_.root());
    PageUnitLookup lookup(&reader, kPage);
    EXPECT_EQ(
        lookup.Next(kPid, {{kBase, kBase + kHuge}}, 0, 10, 0, &units, &next),
        ENOENT);
  }
  PageUnitLookup lookup(&reader_, kPage);
  EXPECT_EQ(
      lookup.Next(kPid + 1, {{kBase, kBase + kHuge}}, 0, 10, 0, &units, &next),
      ENOENT);
}

TEST(HugePagesScaleTest, SixHundredMiBOfHugePagesAreThreeHundredUnits) {
  // The benchmark's worker: 600 MiB in huge pages, frames adjacent.
  FakePageFrames frames(kPage);
  constexpr uint64_t kCount = 300;
  for (uint64_t i = 0; i < kCount; ++i) {
    frames.HugePage(kPid, kBase + i * kHuge, 0x100000 + i * kPagesPerHugePage);
  }
  PageUnitLookup lookup(&frames, kPage);  // windows of 4096 pages (16 MiB)
  std::vector<PageUnit> units;
  uint64_t next = 1;
  ASSERT_EQ(lookup.Next(kPid, {{kBase, kBase + kCount * kHuge}}, 0, 100000, 0,
                        &units, &next),
            0);
  EXPECT_EQ(units.size(), kCount);
  for (const PageUnit& unit : units) {
    EXPECT_EQ(unit.pages, kPagesPerHugePage) << unit.addr;
  }
  EXPECT_EQ(next, 0u);
  // One pagemap read per 16 MiB, one flags read per 8 huge pages (a window
  // holds 8, and each window's adjacent ones are read together).
  EXPECT_EQ(frames.pagemap_reads, static_cast<int>(kCount / 8 + 1));
  EXPECT_EQ(frames.flag_reads, static_cast<int>(kCount / 8 + 1));
}

TEST(HugePageBytesTest, ABatchIsChargedWhatTheKernelMoved) {
  const std::vector<PageUnit> batch = {{kBase, kPagesPerHugePage},
                                       {kBase + kHuge, 1},
                                       {kBase + kHuge + kPage, 1},
                                       {kBase + 2 * kHuge, kPagesPerHugePage}};
  // Unit 2 stayed (busy), unit 3 is still on node 1: neither counts.
  const int status[] = {0, 0, -EBUSY, 1};
  EXPECT_EQ(MovedBytes(batch, status, 0, kPage), kHuge + kPage);
  EXPECT_EQ(MovedBytes(batch, status, 1, kPage), kHuge);
  EXPECT_EQ(MovedBytes({}, status, 0, kPage), 0u);
}

}  // namespace
}  // namespace locus
