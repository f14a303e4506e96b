#include "agent/act/memory/page_migrator.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/fake_kernel_ops.h"

namespace locus {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kPage = 4096;
constexpr uint64_t kBase = 0x10000000;

class PageMigratorTest : public ::testing::Test {
 protected:
  // 1000 pages on node 1, every 10th not present, plus 100 pages on node 0.
  void SetUp() override {
    FakePageOps::Process& p = ops_.processes[7];
    p.ranges = {{kBase, kBase + 1000 * kPage},
                {kBase + 2000 * kPage, kBase + 2100 * kPage}};
    for (uint64_t i = 0; i < 1000; ++i) {
      if (i % 10 != 9) p.page_node[kBase + i * kPage] = 1;
    }
    for (uint64_t i = 2000; i < 2100; ++i) p.page_node[kBase + i * kPage] = 0;
    ops_.clock = &clock_;
  }
  int OnNode(int node) {
    int n = 0;
    for (const auto& [addr, page_node] : ops_.processes[7].page_node) {
      n += page_node == node;
    }
    return n;
  }
  MigratePages Move(int to, uint64_t max_bytes = 0, int from = -1) {
    MigratePages move;
    move.pid = 7;
    move.to_node = to;
    move.from_node = from;
    move.max_bytes = max_bytes;
    return move;
  }
  FakePageOps ops_;
  FakeClock clock_;
};

TEST_F(PageMigratorTest, MovesEverythingInBoundedChunks) {
  MigrationOptions options;
  options.chunk_pages = 64;
  options.move_batch_pages = 64;
  PageMigrator migrator(&ops_, &clock_, options, false);
  ActionResult result = migrator.Apply(Move(0));
  EXPECT_EQ(result.outcome, Outcome::kApplied) << result.message;
  EXPECT_EQ(result.pages_moved, 900u);
  EXPECT_EQ(result.bytes_moved, 900 * kPage);
  EXPECT_EQ(OnNode(0), 1000);
  EXPECT_LE(ops_.largest_call, 64u);
  // The next pass finds nothing left.
  EXPECT_EQ(migrator.Apply(Move(0)).outcome, Outcome::kUnchanged);
}

TEST_F(PageMigratorTest, MovesInBatchesGatheredOverQueries) {
  MigrationOptions options;
  options.chunk_pages = 64;        // 1100 pages: 18 queries
  options.move_batch_pages = 256;  // 900 to move: 4 moves, not one per query
  PageMigrator migrator(&ops_, &clock_, options, false);
  ActionResult result = migrator.Apply(Move(0));
  EXPECT_EQ(result.pages_moved, 900u) << result.message;
  EXPECT_EQ(ops_.query_calls, 18);
  EXPECT_EQ(ops_.move_calls, 4);
  EXPECT_LE(ops_.largest_move, 256u);
  EXPECT_EQ(OnNode(0), 1000);
}

TEST_F(PageMigratorTest, TimeBudgetMovesWhatWasFound) {
  MigrationOptions options;
  options.chunk_pages = 10;
  options.move_batch_pages = 1000;
  options.time_budget_ns = 5'000'000;
  ops_.ns_per_call = 1'000'000;
  PageMigrator migrator(&ops_, &clock_, options, false);
  // Five queries fill the time budget; what they found is moved at once.
  ActionResult result = migrator.Apply(Move(0));
  EXPECT_EQ(ops_.query_calls, 5);
  EXPECT_EQ(ops_.move_calls, 1);
  EXPECT_EQ(result.pages_moved, 45u) << result.message;
  // The next tick resumes after them.
  clock_.Advance(1'000'000'000);
  EXPECT_EQ(migrator.Apply(Move(0)).pages_moved, 45u);
  EXPECT_EQ(OnNode(0), 100 + 90);
}

TEST_F(PageMigratorTest, RangesAreReadOncePerPass) {
  MigrationOptions options;
  options.max_bytes_per_sec = 100 * kPage;
  PageMigrator migrator(&ops_, &clock_, options, false);
  uint64_t moved = 0;
  int applies = 0;
  for (; applies < 20 && moved < 900; ++applies) {
    clock_.Advance(1'000'000'000);
    moved += migrator.Apply(Move(0)).pages_moved;
  }
  EXPECT_EQ(moved, 900u);
  EXPECT_EQ(applies, 9);
  EXPECT_EQ(ops_.ranges_calls, 1);
  // A walk looks up no more than its grant can move, so the pass ends on
  // the next Apply, which finds nothing left; the one after starts anew.
  clock_.Advance(1'000'000'000);
  ActionResult end = migrator.Apply(Move(0));
  EXPECT_EQ(end.outcome, Outcome::kUnchanged);
  EXPECT_THAT(end.message, HasSubstr("pass complete"));
  EXPECT_EQ(ops_.ranges_calls, 1);
  clock_.Advance(1'000'000'000);
  EXPECT_EQ(migrator.Apply(Move(0)).outcome, Outcome::kUnchanged);
  EXPECT_EQ(ops_.ranges_calls, 2);
}

TEST(MigrationOptionsTest, PolicyBudgetAndHalfTheTick) {
  MigrationOptions options = MigrationOptionsFor(512, 250'000'000);
  EXPECT_EQ(options.max_bytes_per_sec, 512ull << 20);
  EXPECT_EQ(options.time_budget_ns, 125'000'000u);
}

TEST_F(PageMigratorTest, RateLimitSpreadsOverTicksAndResumes) {
  MigrationOptions options;
  options.max_bytes_per_sec = 100 * kPage;  // 100 pages a second
  options.chunk_pages = 32;
  PageMigrator migrator(&ops_, &clock_, options, false);
  ActionResult first = migrator.Apply(Move(0));
  EXPECT_EQ(first.pages_moved, 100u);
  EXPECT_THAT(first.message, HasSubstr("rate limit"));
  // No time passed: the bucket is empty.
  EXPECT_EQ(migrator.Apply(Move(0)).pages_moved, 0u);
  clock_.Advance(500'000'000);  // half a second: 50 pages
  EXPECT_EQ(migrator.Apply(Move(0)).pages_moved, 50u);
  EXPECT_EQ(OnNode(0), 100 + 150);
  // It resumed after the pages it already moved instead of rescanning.
  uint64_t moved = 150;
  for (int tick = 0; tick < 20 && moved < 900; ++tick) {
    clock_.Advance(1'000'000'000);
    moved += migrator.Apply(Move(0)).pages_moved;
  }
  EXPECT_EQ(moved, 900u);
}

TEST_F(PageMigratorTest, MaxBytesCapsOneApply) {
  PageMigrator migrator(&ops_, &clock_, MigrationOptions{}, false);
  ActionResult result = migrator.Apply(Move(0, 10 * kPage));
  EXPECT_EQ(result.pages_moved, 10u);
  EXPECT_THAT(result.message, HasSubstr("max_bytes"));
}

TEST_F(PageMigratorTest, TimeBudgetStopsTheTick) {
  MigrationOptions options;
  options.chunk_pages = 10;
  options.time_budget_ns = 5'000'000;
  ops_.ns_per_call = 1'000'000;  // each move_pages call takes 1 ms
  PageMigrator migrator(&ops_, &clock_, options, false);
  ActionResult result = migrator.Apply(Move(0));
  EXPECT_THAT(result.message, HasSubstr("time budget"));
  EXPECT_LT(result.pages_moved, 900u);
  EXPECT_GT(result.pages_moved, 0u);
  EXPECT_LE(ops_.query_calls + ops_.move_calls, 6);
}

TEST_F(PageMigratorTest, FromNodeFilter) {
  PageMigrator migrator(&ops_, &clock_, MigrationOptions{}, false);
  ActionResult result = migrator.Apply(Move(2, 0, 0));
  EXPECT_EQ(result.pages_moved, 100u);
  EXPECT_EQ(OnNode(1), 900);
  EXPECT_EQ(OnNode(2), 100);
}

// A lower memory tier's pages (node 1 here) stay where the kernel put
// them; the others still come.
TEST_F(PageMigratorTest, LeftNodesKeepTheirPages) {
  PageMigrator migrator(&ops_, &clock_, MigrationOptions{}, false);
  MigratePages move = Move(2);
  move.leave_nodes = {1};
  ActionResult result = migrator.Apply(move);
  EXPECT_EQ(result.pages_moved, 100u) << result.message;
  EXPECT_EQ(OnNode(1), 900);
  EXPECT_EQ(OnNode(0), 0);
  move.leave_nodes = {0, 1};
  EXPECT_EQ(migrator.Apply(move).pages_moved, 0u);
  EXPECT_EQ(OnNode(1), 900);
}

TEST_F(PageMigratorTest, FailedPagesAreCountedNotFatal) {
  ops_.move_errors[kBase] = -ENOMEM;
  PageMigrator migrator(&ops_, &clock_, MigrationOptions{}, false);
  ActionResult result = migrator.Apply(Move(0));
  EXPECT_EQ(result.outcome, Outcome::kApplied);
  EXPECT_EQ(result.pages_moved, 899u);
  EXPECT_THAT(result.message, HasSubstr("1 failed"));
}

// move_pages refuses a node outside the task's cpuset.mems as a whole: a
// defect of the plan, told apart from a failure.
TEST_F(PageMigratorTest, ANodeOutsideTheCpusetIsForbidden) {
  ops_.forbidden_nodes = {0};
  PageMigrator migrator(&ops_, &clock_, MigrationOptions{}, false);
  ActionResult result = migrator.Apply(Move(0));
  EXPECT_EQ(result.outcome, Outcome::kForbidden);
  EXPECT_THAT(result.message, HasSubstr("move_pages to node 0"));
  EXPECT_EQ(OnNode(1), 900);
}

TEST_F(PageMigratorTest, DryRunOnlyQueries) {
  PageMigrator migrator(&ops_, &clock_, MigrationOptions{}, true);
  ActionResult result = migrator.Apply(Move(0));
  EXPECT_EQ(result.outcome, Outcome::kDryRun);
  EXPECT_THAT(result.message, HasSubstr("would move 900 of 1100 pages"));
  EXPECT_EQ(ops_.move_calls, 0);
  EXPECT_EQ(OnNode(1), 900);
}

TEST_F(PageMigratorTest, PagesBusyElsewhereAreRetriedNotAnError) {
  // NUMA balancing migrating the same pages: move_pages finds them off the
  // LRU (-EBUSY) or replaced by a migration entry (-ENOENT).
  for (uint64_t i = 0; i < 1000; ++i) {
    ops_.move_errors[kBase + i * kPage] = i % 2 ? -EBUSY : -ENOENT;
  }
  PageMigrator migrator(&ops_, &clock_, MigrationOptions{}, false);
  ActionResult result = migrator.Apply(Move(0));
  EXPECT_EQ(result.outcome, Outcome::kUnchanged) << result.message;
  EXPECT_FALSE(result.nothing_left);
  EXPECT_THAT(result.message, HasSubstr("900 busy"));
  // Once they are free, they move.
  ops_.move_errors.clear();
  clock_.Advance(1'000'000'000);
  EXPECT_EQ(migrator.Apply(Move(0)).pages_moved, 900u);
}

TEST_F(PageMigratorTest, NoPageMovableIsAnError) {
  for (uint64_t i = 0; i < 1000; ++i)
    ops_.move_errors[kBase + i * kPage] = -ENOMEM;
  PageMigrator migrator(&ops_, &clock_, MigrationOptions{}, false);
  ActionResult result = migrator.Apply(Move(0));
  EXPECT_EQ(result.outcome, Outcome::kError) << result.message;
  EXPECT_THAT(result.message, HasSubstr("none of 900 pages"));
}

// Pages a worker still shares with its master: move_pages(MPOL_MF_MOVE)
// answers -EACCES for each. They are not the process's to move; finding only
// those is "nothing to move", not an error that would hold its memory down.
TEST_F(PageMigratorTest, SharedPagesAreLeftNotFailed) {
  for (uint64_t i = 0; i < 100; ++i)
    ops_.move_errors[kBase + i * kPage] = -EACCES;
  PageMigrator migrator(&ops_, &clock_, MigrationOptions{}, false);
  ActionResult result = migrator.Apply(Move(0));
  EXPECT_EQ(result.outcome, Outcome::kApplied) << result.message;
  EXPECT_EQ(result.pages_moved, 810u);
  EXPECT_THAT(result.message, HasSubstr("0 failed, 90 shared left"));
  // The next pass finds only the shared pages: done, not an error.
  result = migrator.Apply(Move(0));
  EXPECT_EQ(result.outcome, Outcome::kUnchanged) << result.message;
  EXPECT_TRUE(result.nothing_left);
  EXPECT_THAT(result.message, HasSubstr("90 shared with other processes"));
}

TEST_F(PageMigratorTest, OnlySharedPagesIsNothingToMove) {
  for (uint64_t i = 0; i < 1000; ++i)
    ops_.move_errors[kBase + i * kPage] = -EACCES;
  PageMigrator migrator(&ops_, &clock_, MigrationOptions{}, false);
  ActionResult result = migrator.Apply(Move(0));
  EXPECT_EQ(result.outcome, Outcome::kUnchanged) << result.message;
  EXPECT_TRUE(result.nothing_left);
}

TEST_F(PageMigratorTest, NothingFoundMidPassIsUnchanged) {
  MigrationOptions options;
  options.chunk_pages = 10;
  options.time_budget_ns = 3'000'000;
  ops_.ns_per_call = 1'000'000;
  PageMigrator migrator(&ops_, &clock_, options, false);
  // Everything is already on node 1, and the tick ends before the pass does.
  ActionResult result = migrator.Apply(Move(1, 0, 0));
  EXPECT_EQ(result.outcome, Outcome::kUnchanged) << result.message;
  EXPECT_THAT(result.message, HasSubstr("time budget"));
  EXPECT_THAT(result.message, ::testing::Not(HasSubstr("pass complete")));
}

TEST_F(PageMigratorTest, GoneProcess) {
  PageMigrator migrator(&ops_, &clock_, MigrationOptions{}, false);
  MigratePages move = Move(0);
  move.pid = 8;
  EXPECT_EQ(migrator.Apply(move).outcome, Outcome::kGone);
}

TEST_F(PageMigratorTest, QueryNodes) {
  PageMigrator migrator(&ops_, &clock_, MigrationOptions{}, false);
  auto nodes = migrator.QueryNodes(7, 0);
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ((*nodes)[1], 900u);
  EXPECT_EQ((*nodes)[0], 100u);
}

}  // namespace
}  // namespace locus
