// Page migration with move_pages(2), a bounded amount per tick: pages are
// looked up a chunk per call and moved a batch per call, within a time
// budget per Apply and a MB/s token bucket, resuming where the last tick
// stopped. numad's whole-process migrate_pages(2) can stall a large worker
// for seconds; this never holds one for more than a batch at a time.
#ifndef LOCUS_AGENT_ACT_PAGE_MIGRATOR_H_
#define LOCUS_AGENT_ACT_PAGE_MIGRATOR_H_

#include <cstdint>
#include <map>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/act/kernel_ops.h"
#include "agent/act/result.h"
#include "common/clock.h"
#include "policy/plan.h"

namespace locus {

struct MigrationOptions {
  uint64_t max_bytes_per_sec = 256ull << 20;  // token bucket rate and burst
  // Per Apply call, checked between move_pages calls. The daemon gives half
  // its tick (MigrationOptionsFor).
  uint64_t time_budget_ns = 20'000'000;
  size_t chunk_pages = 256;  // pages per query (move_pages without nodes)
  // Pages per moving move_pages call, gathered over several queries. Each
  // moving call has a fixed cost on top of its pages (the kernel drains the
  // LRU caches of every CPU and waits for an expedited RCU grace period), so
  // moving a query's worth at a time spends most of the budget on that; the
  // kernel still migrates a batch page by page (or 2 MiB at a time), so the
  // worker never waits on more than those.
  size_t move_batch_pages = 4096;
};

// The options the daemon runs with: the policy's migration budget as the
// token bucket, and half of each tick as the time budget, so that a tick
// that migrates still leaves time for the rest of the loop.
MigrationOptions MigrationOptionsFor(uint32_t budget_mb_per_s,
                                     uint64_t tick_ns);

class PageMigrator {
 public:
  // `ops` and `clock` are borrowed and must outlive the migrator.
  PageMigrator(PageOps* ops, Clock* clock, MigrationOptions options,
               bool dry_run);

  // Moves up to min(move.max_bytes (0: no cap), bucket, time budget) of the
  // process's private writable pages that are not on move.to_node (and are
  // on move.from_node when that is >= 0). Pages not present are skipped.
  // kUnchanged when nothing was found to move (the message says whether the
  // pass over the process completed), kError when pages were found but none
  // could be moved.
  ActionResult Apply(const MigratePages& move) { return Apply(move, dry_run_); }
  ActionResult Apply(const MigratePages& move, bool dry_run);

  // Resident pages per node of a process, by move_pages queries (no
  // moves). Stops after max_pages pages (0: all).
  absl::StatusOr<std::map<int, uint64_t>> QueryNodes(int32_t pid,
                                                     uint64_t max_pages);

 private:
  // One Apply's walk over a process's pass (page_migrator.cc).
  class Run;

  void Refill();

  PageOps* ops_;
  Clock* clock_;
  MigrationOptions options_;
  bool dry_run_;
  double tokens_ = 0;  // bytes
  uint64_t last_refill_ns_ = 0;
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

#endif  // LOCUS_AGENT_ACT_PAGE_MIGRATOR_H_
