// Page migration with move_pages(2), a bounded amount per call: pages are
// looked up a chunk per call and moved a batch per call, within a time
// budget per Apply and a MB/s token bucket, resuming where the last Apply
// stopped. numad's whole-process migrate_pages(2) can stall a large worker
// for seconds; this never holds one for more than a batch at a time. The
// daemon moves pages through the page mover's threads (page_mover.h), each
// job driving one of these; a dry run estimates here, on the loop thread.
// A transparent huge page is one entry in both calls where the page frames
// can be read (page_lookup.h), and is charged the 2 MiB the kernel moves.
#ifndef LOCUS_AGENT_ACT_MEMORY_PAGE_MIGRATOR_H_
#define LOCUS_AGENT_ACT_MEMORY_PAGE_MIGRATOR_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/act/kernel_ops.h"
#include "agent/act/memory/page_lookup.h"
#include "agent/act/memory/token_bucket.h"
#include "agent/act/result.h"
#include "common/clock.h"
#include "policy/plan.h"

namespace locus {

struct MigrationOptions {
  uint64_t max_bytes_per_sec = 256ull << 20;  // token bucket rate and burst
  // Per Apply call, checked between move_pages calls. The page mover gives
  // each job its slice (MoverOptions::slice_ns); the daemon's dry-run
  // estimates, on the loop thread, half a tick (MigrationOptionsFor).
  uint64_t time_budget_ns = 20'000'000;
  // Units per query (move_pages without nodes): a base page, or a whole THP
  // where the lookup sees huge pages (page_lookup.h).
  size_t chunk_pages = 256;
  // Pages per moving move_pages call, gathered over several queries. Each
  // moving call has a fixed cost on top of its pages (the kernel drains the
  // LRU caches of every CPU and waits for an expedited RCU grace period), so
  // moving a query's worth at a time spends most of the budget on that; the
  // kernel still migrates a batch page by page (or 2 MiB at a time), so the
  // worker never waits on more than those. Counted in base pages: a THP's
  // one entry counts 512.
  size_t move_batch_pages = 4096;
};

// The options the daemon runs with: the policy's migration budget as the
// token bucket, and half of each tick as the time budget of a dry run's
// estimate, so that a tick that estimates still leaves time for the rest of
// the loop.
MigrationOptions MigrationOptionsFor(uint32_t budget_mb_per_s,
                                     uint64_t tick_ns);

// What one Apply saw of its process's pass, for the page mover.
struct PassProgress {
  bool pass_started = false;   // this Apply began a pass at the first page
  bool pass_complete = false;  // ... and this one reached the last page
  uint64_t left = 0;           // pages found off the target but busy or failed
  bool rate_limited = false;   // the bucket granted less than a page
  std::vector<MemRange> ranges;  // the pass's ranges, when it completed
};

class PageMigrator {
 public:
  // `ops` and `clock` are borrowed and must outlive the migrator. With
  // `bucket` (borrowed, shared by several migrators) the MB/s budget comes
  // from it and options.max_bytes_per_sec is ignored.
  PageMigrator(PageOps* ops, Clock* clock, MigrationOptions options,
               bool dry_run, TokenBucket* bucket = nullptr);

  // Moves up to min(move.max_bytes (0: no cap), bucket, time budget) of the
  // process's private writable pages that are not on move.to_node (and are
  // on move.from_node when that is >= 0, and not on any of move.leave_nodes).
  // Pages not present are skipped.
  // kUnchanged when nothing was found to move (the message says whether the
  // pass over the process completed), kError when pages were found but none
  // could be moved.
  ActionResult Apply(const MigratePages& move) { return Apply(move, dry_run_); }
  ActionResult Apply(const MigratePages& move, bool dry_run);
  // The same, stopping before the next move_pages call once `cancel` is
  // set (the batch found is dropped, the pass forgotten), and saying in
  // `progress` where the pass stands.
  ActionResult Apply(const MigratePages& move, bool dry_run,
                     const std::atomic<bool>* cancel, PassProgress* progress);

  // Resident pages per node of a process, by move_pages queries (no
  // moves). Stops after max_pages pages (0: all).
  absl::StatusOr<std::map<int, uint64_t>> QueryNodes(int32_t pid,
                                                     uint64_t max_pages);

 private:
  // One Apply's walk over a process's pass (page_migrator.cc).
  class Run;

  // Returns what a walk left of its grant, or charges what it moved beyond.
  void Settle(uint64_t granted, uint64_t moved);

  Clock* clock_;
  MigrationOptions options_;
  bool dry_run_;
  PageLookup lookup_;
  std::unique_ptr<TokenBucket> own_bucket_;
  TokenBucket* bucket_;
  // Where a process's pass stands: the next address to look at, and the
  // ranges it walks. The ranges are read when a pass starts and kept until
  // it completes: reading them costs a page-table walk (numa_maps), as much
  // as a few chunks of moves for a large process; a range that goes away
  // mid-pass only has its pages reported absent.
  struct Pass {
    uint64_t cursor = 0;
    std::vector<MemRange> ranges;
  };
  std::map<int32_t, Pass> passes_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_MEMORY_PAGE_MIGRATOR_H_
