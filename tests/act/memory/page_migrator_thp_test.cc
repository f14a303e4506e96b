// The migration pass over transparent huge pages: one move_pages entry per
// THP in the query and the move, bytes counted and charged as the kernel
// moves them (2 MiB a THP), and the base-page walk where no frames are read.
#include <cstdint>

#include "agent/act/memory/page_migrator.h"
#include "agent/act/memory/token_bucket.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/fake_kernel_ops.h"
#include "tests/act/memory/fake_page_frames.h"

namespace locus {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kPage = 4096;
constexpr uint64_t kHugeBytes = kPagesPerHugePage * kPage;  // 2 MiB
constexpr uint64_t kHuge = 0x40000000;                      // 2 THPs here
constexpr uint64_t kBase = 0x50000000;                      // 16 base pages
constexpr uint64_t kAllPages = 2 * kPagesPerHugePage + 16;

class PageMigratorThpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FakePageOps::Process& p = ops_.processes[7];
    p.ranges = {{kHuge, kHuge + 2 * kHugeBytes}, {kBase, kBase + 16 * kPage}};
    for (uint64_t k = 0; k < 2; ++k) {
      const uint64_t head = kHuge + k * kHugeBytes;
      frames_.HugePage(7, head, (k + 1) * kPagesPerHugePage);
      ops_.huge.insert(head);
    }
    for (uint64_t i = 0; i < 2 * kPagesPerHugePage; ++i) {
      p.page_node[kHuge + i * kPage] = 1;
    }
    for (uint64_t i = 0; i < 16; ++i) {
      p.page_node[kBase + i * kPage] = 1;
      frames_.Page(7, kBase + i * kPage, 100000 + 7 * i);
    }
    ops_.clock = &clock_;
    ops_.frames = &frames_;
  }
  uint64_t OnNode(int node) {
    uint64_t n = 0;
    for (const auto& [addr, page_node] : ops_.processes[7].page_node) {
      n += page_node == node;
    }
    return n;
  }
  static MigratePages Move(int to, uint64_t max_bytes = 0) {
    MigratePages move;
    move.pid = 7;
    move.to_node = to;
    move.max_bytes = max_bytes;
    return move;
  }
  FakePageOps ops_;
  FakePageFrames frames_;
  FakeClock clock_;
};

TEST_F(PageMigratorThpTest, OneEntryPerHugePageInQueryAndMove) {
  PageMigrator migrator(&ops_, &clock_, MigrationOptions{}, false);
  ActionResult result = migrator.Apply(Move(0));
  EXPECT_EQ(result.outcome, Outcome::kApplied) << result.message;
  // Two THP entries and 16 base-page entries, not 1040 of them.
  EXPECT_EQ(ops_.entries_queried, 18u);
  EXPECT_EQ(ops_.entries_moved, 18u);
  EXPECT_EQ(result.pages_moved, kAllPages);
  EXPECT_EQ(result.bytes_moved, kAllPages * kPage);
  EXPECT_EQ(OnNode(0), kAllPages);
  EXPECT_EQ(migrator.Apply(Move(0)).outcome, Outcome::kUnchanged);
}

TEST_F(PageMigratorThpTest, WithoutFramesWalksBasePagesAsBefore) {
  ops_.frames = nullptr;  // no CAP_SYS_ADMIN: no PFNs to read
  PageMigrator migrator(&ops_, &clock_, MigrationOptions{}, false);
  ActionResult result = migrator.Apply(Move(0));
  EXPECT_EQ(result.outcome, Outcome::kApplied) << result.message;
  EXPECT_EQ(ops_.entries_queried, kAllPages);
  EXPECT_EQ(ops_.entries_moved, kAllPages);
  EXPECT_EQ(result.pages_moved, kAllPages);
  EXPECT_EQ(result.bytes_moved, kAllPages * kPage);
  EXPECT_EQ(OnNode(0), kAllPages);
}

TEST_F(PageMigratorThpTest, BucketChargedTheBytesMoved) {
  TokenBucket bucket(&clock_, 8ull << 20);  // starts with 8 MiB
  PageMigrator migrator(&ops_, &clock_, MigrationOptions{}, false, &bucket);
  ActionResult result = migrator.Apply(Move(0));
  EXPECT_EQ(result.bytes_moved, kAllPages * kPage) << result.message;
  EXPECT_EQ(bucket.Take(UINT64_MAX), (8ull << 20) - kAllPages * kPage);
}

TEST_F(PageMigratorThpTest, HugePageGoesOnSmallerGrantAndOvershootIsRepaid) {
  ops_.processes[7].ranges.pop_back();      // the two THPs only
  TokenBucket bucket(&clock_, 1ull << 20);  // 1 MiB/s, starts full
  PageMigrator migrator(&ops_, &clock_, MigrationOptions{}, false, &bucket);
  PassProgress progress;
  ActionResult result = migrator.Apply(Move(0), false, nullptr, &progress);
  // A 1 MiB grant moves one whole THP, not none: 1 MiB over the grant.
  EXPECT_EQ(result.bytes_moved, kHugeBytes) << result.message;
  EXPECT_EQ(result.pages_moved, kPagesPerHugePage);
  EXPECT_EQ(ops_.entries_moved, 1u);
  // The next second's 1 MiB repays the overshoot and moves nothing ...
  clock_.Advance(1'000'000'000);
  progress = {};
  result = migrator.Apply(Move(0), false, nullptr, &progress);
  EXPECT_EQ(result.bytes_moved, 0u) << result.message;
  EXPECT_TRUE(progress.rate_limited);
  // ... and the one after moves the second THP: 4 MiB in 3 MiB of refills
  // and the 1 MiB burst the bucket started with.
  clock_.Advance(1'000'000'000);
  result = migrator.Apply(Move(0));
  EXPECT_EQ(result.bytes_moved, kHugeBytes) << result.message;
  EXPECT_EQ(OnNode(0), 2 * kPagesPerHugePage);
  EXPECT_EQ(bucket.Take(UINT64_MAX), 0u);  // 1 MiB over again, owed
}

TEST_F(PageMigratorThpTest, BatchSizeCountsBasePages) {
  MigrationOptions options;
  options.move_batch_pages = kPagesPerHugePage;  // one THP per moving call
  PageMigrator migrator(&ops_, &clock_, options, false);
  ActionResult result = migrator.Apply(Move(0));
  EXPECT_EQ(result.pages_moved, kAllPages) << result.message;
  EXPECT_EQ(ops_.move_calls, 3);  // THP, THP, the 16 base pages
}

TEST_F(PageMigratorThpTest, DryRunAndQueryCountBasePages) {
  PageMigrator migrator(&ops_, &clock_, MigrationOptions{}, true);
  ActionResult result = migrator.Apply(Move(0));
  EXPECT_EQ(result.outcome, Outcome::kDryRun);
  EXPECT_THAT(result.message, HasSubstr("1040 of 1040 pages scanned"));
  auto nodes = migrator.QueryNodes(7, 0);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(*nodes, (std::map<int, uint64_t>{{1, kAllPages}}));
  EXPECT_EQ(ops_.move_calls, 0);
}

TEST_F(PageMigratorThpTest, LooksUpNoMoreThanTheGrantCanMove) {
  // 600 MiB of THPs (the benchmark's worker) and grants of 16 MiB (a
  // mover's batch): each grant looks up the 8 THPs it moves, not a chunk of
  // 256 (512 MiB, 32 windows of frames read again for every grant).
  FakePageOps::Process& p = ops_.processes[8];
  constexpr uint64_t kCount = 300;
  p.ranges = {{kHuge, kHuge + kCount * kHugeBytes}};
  for (uint64_t k = 0; k < kCount; ++k) {
    const uint64_t head = kHuge + k * kHugeBytes;
    frames_.HugePage(8, head, (k + 4) * kPagesPerHugePage);
    ops_.huge.insert(head);
    for (uint64_t i = 0; i < kPagesPerHugePage; ++i) {
      p.page_node[head + i * kPage] = 1;
    }
  }
  PageMigrator migrator(&ops_, &clock_, MigrationOptions{}, false);
  MigratePages move = Move(0, 16ull << 20);
  move.pid = 8;
  for (int grant = 1; grant <= 3; ++grant) {
    ActionResult result = migrator.Apply(move);
    EXPECT_EQ(result.bytes_moved, 16ull << 20) << result.message;
    EXPECT_EQ(ops_.entries_queried, 8u * grant);
    EXPECT_EQ(ops_.entries_moved, 8u * grant);
    EXPECT_EQ(frames_.pagemap_reads, grant);  // a window of 8 THPs each
  }
}

TEST_F(PageMigratorThpTest, GoneProcessWhileReadingFrames) {
  frames_.pagemap.erase(7);  // the pagemap read says ESRCH
  PageMigrator migrator(&ops_, &clock_, MigrationOptions{}, false);
  ActionResult result = migrator.Apply(Move(0));
  EXPECT_EQ(result.outcome, Outcome::kGone) << result.message;
  EXPECT_EQ(ops_.move_calls, 0);
}

}  // namespace
}  // namespace locus
