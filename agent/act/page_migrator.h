// Page migration with move_pages(2), a bounded amount per tick: a chunk of
// pages per call, a time budget per Apply and a MB/s token bucket, resuming
// where the last tick stopped. numad's whole-process migrate_pages(2) can
// stall a large worker for seconds; this never holds one for more than a
// chunk at a time.
#ifndef LOCUS_AGENT_ACT_PAGE_MIGRATOR_H_
#define LOCUS_AGENT_ACT_PAGE_MIGRATOR_H_

#include <cstdint>
#include <map>

#include "absl/status/statusor.h"
#include "agent/act/kernel_ops.h"
#include "agent/act/result.h"
#include "policy/plan.h"

namespace locus {

struct MigrationOptions {
  uint64_t max_bytes_per_sec = 256ull << 20;  // token bucket rate and burst
  uint64_t time_budget_ns = 20'000'000;       // per Apply call
  size_t chunk_pages = 256;                   // pages per move_pages call
};

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
  void Refill();

  PageOps* ops_;
  Clock* clock_;
  MigrationOptions options_;
  bool dry_run_;
  double tokens_ = 0;  // bytes
  uint64_t last_refill_ns_ = 0;
  std::map<int32_t, uint64_t> cursor_;  // pid -> next address to look at
};

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_PAGE_MIGRATOR_H_
