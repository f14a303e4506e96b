#include "agent/act/memory/page_mover.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/act/fake_kernel_ops.h"
#include "tests/act/memory/fake_page_frames.h"

namespace locus {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kPage = 4096;
constexpr uint64_t kBase = 0x10000000;

// A clock the mover's threads may read while the test moves it.
class SharedClock final : public Clock {
 public:
  uint64_t NowNs() override { return now_.load(); }
  void Advance(uint64_t ns) { now_ += ns; }

 private:
  std::atomic<uint64_t> now_{1'000'000'000};
};

// FakePageOps behind a mutex, for the mover's threads. It counts the calls
// in flight (overall and per process), can hold the n-th call until
// released, and can make each call last `call_ms` of real time.
class SharedPageOps : public PageOps {
 public:
  int MovePages(int32_t pid, size_t count, void** pages, const int* nodes,
                int* status) override {
    std::unique_lock lock(mu);
    const int call = ++calls;
    errno = 0;
    caller_nice.insert(getpriority(PRIO_PROCESS, 0));  // this thread's
    max_in_flight = std::max(max_in_flight, ++in_flight);
    max_same_pid = std::max(max_same_pid, ++in_flight_of[pid]);
    if (nodes != nullptr) ++moves_to[nodes[0]];
    if (call == hold_call) {
      held = true;
      changed.notify_all();
      changed.wait(lock, [&] { return released; });
    }
    if (call_ms > 0) {
      lock.unlock();
      absl::SleepFor(absl::Milliseconds(call_ms));
      lock.lock();
    }
    const int rc = fake.MovePages(pid, count, pages, nodes, status);
    --in_flight;
    --in_flight_of[pid];
    return rc;
  }
  int Ranges(int32_t pid, std::vector<MemRange>* ranges) override {
    std::lock_guard lock(mu);
    return fake.Ranges(pid, ranges);
  }
  uint64_t PageSize() override { return kPage; }
  PageFrameReader* Frames() override { return fake.frames; }

  void WaitHeld() {
    std::unique_lock lock(mu);
    changed.wait(lock, [&] { return held; });
  }
  void Release() {
    std::lock_guard lock(mu);
    released = true;
    changed.notify_all();
  }
  // `count` pages of process `pid` on `node`, in one range.
  void AddProcess(int32_t pid, uint64_t count, int node) {
    std::lock_guard lock(mu);
    const uint64_t base = kBase + static_cast<uint64_t>(pid) * (1ull << 30);
    FakePageOps::Process& p = fake.processes[pid];
    p.ranges.push_back({base, base + count * kPage});
    for (uint64_t i = 0; i < count; ++i) p.page_node[base + i * kPage] = node;
  }
  int OnNode(int32_t pid, int node) {
    std::lock_guard lock(mu);
    int n = 0;
    for (const auto& [addr, on] : fake.processes[pid].page_node) {
      n += on == node;
    }
    return n;
  }
  int Calls() {
    std::lock_guard lock(mu);
    return calls;
  }

  std::mutex mu;
  std::condition_variable changed;
  FakePageOps fake;
  int calls = 0, in_flight = 0, max_in_flight = 0, max_same_pid = 0;
  std::map<int32_t, int> in_flight_of;
  std::map<int, int> moves_to;  // moving calls by their target node
  int hold_call = -1;
  bool held = false, released = false;
  int call_ms = 0;
  std::set<int> caller_nice;  // of the threads that called
};

MigratePages Move(int32_t pid, int to, uint64_t max_pages = 0) {
  return MigratePages{.pid = pid,
                      .from_node = -1,
                      .to_node = to,
                      .max_bytes = max_pages * kPage};
}

class PageMoverTest : public ::testing::Test {
 protected:
  MoverOptions Options(int threads, uint64_t pages_per_sec = 1 << 20) {
    MoverOptions options;
    options.threads = threads;
    options.migration.max_bytes_per_sec = pages_per_sec * kPage;
    options.migration.chunk_pages = 64;
    options.migration.move_batch_pages = 64;
    return options;
  }
  SharedPageOps ops_;
  SharedClock clock_;
};

TEST_F(PageMoverTest, MovesBetweenSetsWithinEachGrant) {
  ops_.AddProcess(7, 1000, 1);
  PageMover mover(&ops_, &clock_, Options(2));
  ActionResult queued = mover.Set(Move(7, 0, 400));
  EXPECT_EQ(queued.outcome, Outcome::kApplied);
  EXPECT_THAT(queued.message, HasSubstr("queued"));
  mover.WaitIdle();
  EXPECT_EQ(ops_.OnNode(7, 0), 400);  // the grant, not more
  ActionResult next = mover.Set(Move(7, 0, 1000));
  EXPECT_EQ(next.outcome, Outcome::kApplied);
  EXPECT_EQ(next.pages_moved, 400u);
  EXPECT_EQ(next.bytes_moved, 400 * kPage);
  mover.WaitIdle();
  EXPECT_EQ(ops_.OnNode(7, 0), 1000);
  ActionResult rest = mover.Set(Move(7, 0, 1000));
  EXPECT_EQ(rest.pages_moved, 600u);
  EXPECT_THAT(rest.message, HasSubstr("pass complete"));
  ActionResult done = mover.Set(Move(7, 0, 1000));
  EXPECT_EQ(done.outcome, Outcome::kUnchanged);
  EXPECT_TRUE(done.nothing_left);
}

// A grant under 2 MiB still moves a THP, whole and with one entry, and the
// tick is told the base pages and bytes the kernel moved.
TEST_F(PageMoverTest, HugePageMovesWholeOnSmallerGrant) {
  FakePageFrames frames;
  const uint64_t base = kBase + (9ull << 30);
  ops_.AddProcess(9, 2 * kPagesPerHugePage, 1);
  for (uint64_t k = 0; k < 2; ++k) {
    const uint64_t head = base + k * kPagesPerHugePage * kPage;
    frames.HugePage(9, head, (k + 1) * kPagesPerHugePage);
    ops_.fake.huge.insert(head);
  }
  ops_.fake.frames = &frames;
  PageMover mover(&ops_, &clock_, Options(1));
  mover.Set(Move(9, 0, 100));
  mover.WaitIdle();
  EXPECT_EQ(ops_.OnNode(9, 0), static_cast<int>(kPagesPerHugePage));
  ActionResult next = mover.Set(Move(9, 0, 100));
  EXPECT_EQ(next.pages_moved, kPagesPerHugePage) << next.message;
  EXPECT_EQ(next.bytes_moved, kPagesPerHugePage * kPage);
  mover.WaitIdle();
  EXPECT_EQ(ops_.OnNode(9, 0), static_cast<int>(2 * kPagesPerHugePage));
  std::lock_guard lock(ops_.mu);
  EXPECT_EQ(ops_.fake.entries_moved, 2u);
}

// A tick that comes while a call is under way: the move goes on.
TEST_F(PageMoverTest, WorkUnderWayIsReportedAsMoving) {
  ops_.AddProcess(7, 100, 1);
  ops_.hold_call = 1;
  PageMover mover(&ops_, &clock_, Options(2));
  mover.Set(Move(7, 0));
  ops_.WaitHeld();
  ActionResult tick = mover.Set(Move(7, 0));
  EXPECT_EQ(tick.outcome, Outcome::kApplied);
  EXPECT_EQ(tick.pages_moved, 0u);
  EXPECT_THAT(tick.message, HasSubstr("moving"));
  EXPECT_FALSE(tick.nothing_left);
  ops_.Release();
  mover.WaitIdle();
  EXPECT_EQ(mover.Set(Move(7, 0)).pages_moved, 100u);
}

// Two processes, four threads, one bucket of 300 pages a second: 300 pages
// move in all until the clock lets more through, not 300 each.
TEST_F(PageMoverTest, OneBudgetForAllMovers) {
  ops_.AddProcess(7, 1000, 1);
  ops_.AddProcess(8, 1000, 1);
  PageMover mover(&ops_, &clock_, Options(4, 300));
  mover.Set(Move(7, 0));
  mover.Set(Move(8, 0));
  mover.WaitIdle();
  EXPECT_EQ(ops_.OnNode(7, 0) + ops_.OnNode(8, 0), 300);
  clock_.Advance(500'000'000);
  mover.WaitIdle();
  EXPECT_EQ(ops_.OnNode(7, 0) + ops_.OnNode(8, 0), 450);
}

TEST_F(PageMoverTest, CancelStopsBeforeTheNextCall) {
  ops_.AddProcess(7, 1000, 1);
  ops_.hold_call = 3;
  MoverOptions options = Options(2);
  options.migration.chunk_pages = 10;
  options.migration.move_batch_pages = 10;
  PageMover mover(&ops_, &clock_, options);
  mover.Set(Move(7, 0));
  ops_.WaitHeld();
  mover.Cancel(7);
  ops_.Release();
  mover.WaitIdle();
  EXPECT_EQ(ops_.Calls(), 3);  // the call under way, none after
  EXPECT_LT(ops_.OnNode(7, 0), 1000);
}

TEST_F(PageMoverTest, ANewTargetDropsTheOldQueue) {
  ops_.AddProcess(7, 1000, 1);
  ops_.hold_call = 2;
  MoverOptions options = Options(2);
  options.migration.chunk_pages = 10;
  options.migration.move_batch_pages = 10;
  PageMover mover(&ops_, &clock_, options);
  mover.Set(Move(7, 0));
  ops_.WaitHeld();  // query, then the held move to node 0
  EXPECT_EQ(mover.Set(Move(7, 2)).outcome, Outcome::kApplied);
  ops_.Release();
  mover.WaitIdle();
  EXPECT_EQ(ops_.moves_to[0], 1);  // the held call, none after
  EXPECT_EQ(ops_.OnNode(7, 2), 1000);
}

TEST_F(PageMoverTest, DifferentProcessesMoveInParallel) {
  ops_.AddProcess(7, 512, 1);
  ops_.AddProcess(8, 512, 1);
  ops_.call_ms = 5;
  PageMover mover(&ops_, &clock_, Options(2));
  mover.Set(Move(7, 0));
  mover.Set(Move(8, 0));
  mover.WaitIdle();
  EXPECT_EQ(ops_.OnNode(7, 0) + ops_.OnNode(8, 0), 1024);
  EXPECT_EQ(ops_.max_in_flight, 2);
  EXPECT_EQ(ops_.max_same_pid, 1);  // never two threads on one process
}

TEST_F(PageMoverTest, OneMoverMovesOneProcessAtATime) {
  ops_.AddProcess(7, 256, 1);
  ops_.AddProcess(8, 256, 1);
  ops_.call_ms = 2;
  PageMover mover(&ops_, &clock_, Options(1));
  mover.Set(Move(7, 0));
  mover.Set(Move(8, 0));
  mover.WaitIdle();
  EXPECT_EQ(ops_.OnNode(7, 0) + ops_.OnNode(8, 0), 512);
  EXPECT_EQ(ops_.max_in_flight, 1);
}

TEST_F(PageMoverTest, MoversRunNicerThanTheLoop) {
  ops_.AddProcess(7, 256, 1);
  ops_.AddProcess(8, 256, 1);
  errno = 0;
  const int loop_nice = getpriority(PRIO_PROCESS, 0);
  if (loop_nice >= 19) GTEST_SKIP() << "already at nice 19: nothing nicer";
  MoverOptions options = Options(2);
  options.nice = loop_nice + 1;
  PageMover mover(&ops_, &clock_, options);
  mover.Set(Move(7, 0));
  mover.Set(Move(8, 0));
  mover.WaitIdle();
  EXPECT_EQ(ops_.OnNode(7, 0) + ops_.OnNode(8, 0), 512);
  // Every move_pages call came from a mover at that nice value; this
  // thread (the loop's, in the agent) keeps its own.
  EXPECT_THAT(ops_.caller_nice, ::testing::ElementsAre(options.nice));
  EXPECT_EQ(getpriority(PRIO_PROCESS, 0), loop_nice);
}

// A pass that moved everything is not walked again for the same target;
// a new mapping (new pages) is.
TEST_F(PageMoverTest, NoSecondWalkUntilTheMappingsChange) {
  ops_.AddProcess(7, 300, 1);
  PageMover mover(&ops_, &clock_, Options(2));
  mover.Set(Move(7, 0));
  mover.WaitIdle();
  EXPECT_EQ(mover.Set(Move(7, 0)).pages_moved, 300u);
  EXPECT_TRUE(mover.Set(Move(7, 0)).nothing_left);
  const int calls = ops_.Calls();
  for (int tick = 0; tick < 3; ++tick) {
    ActionResult again = mover.Set(Move(7, 0));
    mover.WaitIdle();
    EXPECT_EQ(again.pages_moved, 0u);
  }
  EXPECT_EQ(ops_.Calls(), calls) << "looked up pages already placed";
  EXPECT_TRUE(mover.Set(Move(7, 0)).nothing_left);
  {
    std::lock_guard lock(ops_.mu);
    FakePageOps::Process& p = ops_.fake.processes[7];
    p.ranges.insert(p.ranges.begin(), {kBase, kBase + 20 * kPage});
    for (uint64_t i = 0; i < 20; ++i) p.page_node[kBase + i * kPage] = 1;
  }
  mover.Set(Move(7, 0));
  mover.WaitIdle();  // looks at the mappings: changed, so walks again
  EXPECT_EQ(mover.Set(Move(7, 0)).pages_moved, 20u);
  EXPECT_EQ(ops_.OnNode(7, 0), 320);
}

TEST_F(PageMoverTest, AGoneProcessEndsItsJob) {
  PageMover mover(&ops_, &clock_, Options(2));
  EXPECT_EQ(mover.Set(Move(9, 0)).outcome, Outcome::kApplied);
  mover.WaitIdle();
  EXPECT_EQ(mover.Set(Move(9, 0)).outcome, Outcome::kGone);
  // Asked again, it is a new job.
  EXPECT_EQ(mover.Set(Move(9, 0)).outcome, Outcome::kApplied);
}

TEST(DefaultPageMoversTest, OnePerNodeBetweenTwoAndEight) {
  EXPECT_EQ(DefaultPageMovers(1), 2);
  EXPECT_EQ(DefaultPageMovers(4), 4);
  EXPECT_EQ(DefaultPageMovers(16), 8);
}

}  // namespace
}  // namespace locus
