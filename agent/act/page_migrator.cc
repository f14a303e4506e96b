#include "agent/act/page_migrator.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace locus {
namespace {

// Collects up to `max` page addresses from `cursor` on; returns the address
// after the last one taken, or 0 when the ranges are exhausted.
uint64_t NextChunk(const std::vector<MemRange>& ranges, uint64_t cursor,
                   uint64_t page_size, size_t max, std::vector<void*>* pages) {
  pages->clear();
  for (const MemRange& range : ranges) {
    if (range.end <= cursor) continue;
    uint64_t addr = std::max(range.start, cursor);
    addr -= addr % page_size;
    for (; addr < range.end; addr += page_size) {
      if (pages->size() == max) return addr;
      pages->push_back(reinterpret_cast<void*>(addr));
    }
  }
  return 0;
}

}  // namespace

MigrationOptions MigrationOptionsFor(uint32_t budget_mb_per_s,
                                     uint64_t tick_ns) {
  MigrationOptions options;
  options.max_bytes_per_sec = uint64_t{budget_mb_per_s} << 20;
  options.time_budget_ns = tick_ns / 2;
  return options;
}

PageMigrator::PageMigrator(PageOps* ops, Clock* clock, MigrationOptions options,
                           bool dry_run)
    : ops_(ops), clock_(clock), options_(options), dry_run_(dry_run) {
  if (options_.chunk_pages == 0) options_.chunk_pages = 1;
  if (options_.move_batch_pages == 0) options_.move_batch_pages = 1;
  tokens_ = static_cast<double>(options_.max_bytes_per_sec);
  last_refill_ns_ = clock_->NowNs();
}

void PageMigrator::Refill() {
  uint64_t now = clock_->NowNs();
  double seconds = static_cast<double>(now - last_refill_ns_) / 1e9;
  last_refill_ns_ = now;
  tokens_ = std::min(tokens_ + seconds * options_.max_bytes_per_sec,
                     static_cast<double>(options_.max_bytes_per_sec));
}

ActionResult PageMigrator::Apply(const MigratePages& move, bool dry_run) {
  const std::string who = absl::StrCat("pid ", move.pid);
  if (move.to_node < 0) {
    return MakeResult(Outcome::kError, absl::StrCat(who, ": no target node"));
  }
  Pass& pass = passes_[move.pid];
  if (pass.cursor == 0 || pass.ranges.empty()) {
    if (int err = ops_->Ranges(move.pid, &pass.ranges); err != 0) {
      passes_.erase(move.pid);
      return MakeResult(err == ESRCH ? Outcome::kGone : Outcome::kError,
                        absl::StrCat(who, ": maps: ", std::strerror(err)));
    }
  }
  const std::vector<MemRange>& ranges = pass.ranges;
  Refill();
  const uint64_t page_size = ops_->PageSize();
  uint64_t budget = static_cast<uint64_t>(tokens_);
  if (move.max_bytes > 0) budget = std::min(budget, move.max_bytes);
  const uint64_t budget_pages = budget / page_size;

  const uint64_t start_ns = clock_->NowNs();
  uint64_t cursor = pass.cursor;
  const bool from_start = cursor == 0;
  uint64_t scanned = 0, candidates = 0, moved = 0, failed = 0, shared = 0,
           busy = 0;
  bool wrapped = false;
  std::string stop = "budget";
  std::vector<void*> pages;
  std::vector<int> status;
  std::vector<void*> to_move;      // the batch: found, not moved yet
  uint64_t batch_cursor = cursor;  // where the batch's first chunk started
  std::vector<int> nodes, moved_status;
  // Moves the batch; 0 or the errno of the call.
  auto flush = [&]() -> int {
    if (dry_run || to_move.empty()) return 0;
    nodes.assign(to_move.size(), move.to_node);
    moved_status.assign(to_move.size(), 0);
    if (int err = ops_->MovePages(move.pid, to_move.size(), to_move.data(),
                                  nodes.data(), moved_status.data());
        err != 0 && err != ENOENT) {
      return err;
    }
    for (int s : moved_status) {
      if (s == move.to_node) {
        ++moved;
      } else if (s == -EACCES) {
        // Mapped by other processes too (pages a worker still shares with
        // its master since fork): MPOL_MF_MOVE leaves them, by design. Not
        // this process's to move, so not a failure.
        ++shared;
      } else if (s == -EBUSY || s == -EAGAIN || s == -ENOENT) {
        // Taken by someone else meanwhile (NUMA balancing migrating the
        // same pages, off the LRU, or a migration entry in place of the
        // page): retried on a later pass, and not a failure of ours.
        ++busy;
      } else {
        ++failed;  // -ENOMEM, ...: retried on a later pass
      }
    }
    to_move.clear();
    return 0;
  };
  auto move_error = [&](int err) {
    pass.cursor = batch_cursor;
    return MakeResult(err == ESRCH ? Outcome::kGone : Outcome::kError,
                      absl::StrCat(who, ": move_pages to node ", move.to_node,
                                   ": ", std::strerror(err)));
  };
  while (true) {
    if (!dry_run && moved + to_move.size() >= budget_pages) {
      stop = absl::StrCat("rate limit ", options_.max_bytes_per_sec >> 20,
                          " MiB/s");
      if (move.max_bytes > 0 && budget == move.max_bytes) stop = "max_bytes";
      break;
    }
    if (clock_->NowNs() - start_ns >= options_.time_budget_ns) {
      stop = absl::StrCat("time budget ", options_.time_budget_ns / 1000000,
                          " ms");
      break;
    }
    uint64_t next =
        NextChunk(ranges, cursor, page_size, options_.chunk_pages, &pages);
    if (pages.empty()) {
      cursor = 0;
      wrapped = true;
      stop = "pass complete";
      break;
    }
    status.assign(pages.size(), 0);
    if (int err = ops_->MovePages(move.pid, pages.size(), pages.data(), nullptr,
                                  status.data());
        err != 0) {
      pass.cursor = batch_cursor;  // the unmoved batch is found again
      Outcome outcome = err == ESRCH   ? Outcome::kGone
                        : err == EPERM ? Outcome::kForbidden
                                       : Outcome::kError;
      return MakeResult(
          outcome, absl::StrCat(who, ": move_pages: ", std::strerror(err)));
    }
    scanned += pages.size();
    if (to_move.empty()) batch_cursor = cursor;
    uint64_t resume = next;  // where the next chunk starts
    for (size_t i = 0; i < pages.size(); ++i) {
      int node = status[i];
      if (node < 0 || node == move.to_node) continue;  // absent or there
      if (move.from_node >= 0 && node != move.from_node) continue;
      if (!dry_run && moved + to_move.size() >= budget_pages) {
        resume = reinterpret_cast<uint64_t>(pages[i]);
        break;
      }
      ++candidates;
      if (dry_run) continue;
      to_move.push_back(pages[i]);
      if (to_move.size() >= options_.move_batch_pages) {
        if (int err = flush(); err != 0) return move_error(err);
        batch_cursor = reinterpret_cast<uint64_t>(pages[i]) + page_size;
      }
    }
    if (next == 0 && resume == 0) {
      cursor = 0;
      wrapped = true;
      stop = "pass complete";
      break;
    }
    cursor = resume;
  }
  if (int err = flush(); err != 0) return move_error(err);
  pass.cursor = cursor;
  if (cursor == 0) pass.ranges.clear();  // read afresh for the next pass
  if (!dry_run) tokens_ -= static_cast<double>(moved * page_size);
  const uint64_t elapsed = clock_->NowNs() - start_ns;

  ActionResult result;
  result.pages_moved = moved;
  result.bytes_moved = moved * page_size;
  const std::string summary = absl::StrFormat(
      "%d of %d pages scanned to node %d (%.1f MiB) in %.1f ms, %d failed%s; "
      "stopped: %s",
      dry_run ? candidates : moved, scanned, move.to_node,
      static_cast<double>((dry_run ? candidates : moved) * page_size) /
          (1 << 20),
      static_cast<double>(elapsed) / 1e6, failed,
      absl::StrCat(shared > 0 ? absl::StrCat(", ", shared, " shared left") : "",
                   busy > 0 ? absl::StrCat(", ", busy, " busy") : ""),
      stop);
  if (dry_run) {
    result.outcome = Outcome::kDryRun;
    result.message = absl::StrCat(who, ": would move ", summary);
  } else if (moved == 0 && busy > 0 && candidates == shared + busy) {
    // Everything found was busy elsewhere: not done, not an error either;
    // the next tick carries on.
    result.outcome = Outcome::kUnchanged;
    result.message =
        absl::StrCat(who, ": none of ", candidates, " pages moved to node ",
                     move.to_node, ": ", busy,
                     " busy (being moved by someone else); "
                     "stopped: ",
                     stop);
  } else if (moved == 0 && candidates == shared) {
    // Nothing found (or only pages shared with other processes): after a
    // whole pass the process is done; mid-pass the next tick carries on
    // from the cursor.
    result.outcome = Outcome::kUnchanged;
    result.nothing_left = wrapped && from_start;
    result.message = absl::StrCat(
        who, ": nothing to move to node ", move.to_node, " (", scanned,
        " pages scanned",
        shared > 0 ? absl::StrCat(", ", shared, " shared with other processes")
                   : "",
        wrapped && from_start ? ", pass complete" : "", "; stopped: ", stop,
        ")");
  } else if (moved == 0 && !dry_run && budget_pages > 0) {
    result.outcome = Outcome::kError;
    result.message = absl::StrCat(who, ": none of ", candidates,
                                  " pages could be moved to node ",
                                  move.to_node, " (busy or no memory there)");
  } else {
    result.outcome = Outcome::kApplied;
    result.message = absl::StrCat(who, ": moved ", summary);
  }
  return result;
}

absl::StatusOr<std::map<int, uint64_t>> PageMigrator::QueryNodes(
    int32_t pid, uint64_t max_pages) {
  std::vector<MemRange> ranges;
  if (int err = ops_->Ranges(pid, &ranges); err != 0) {
    return absl::NotFoundError(
        absl::StrCat("pid ", pid, ": maps: ", std::strerror(err)));
  }
  const uint64_t page_size = ops_->PageSize();
  std::map<int, uint64_t> per_node;
  std::vector<void*> pages;
  std::vector<int> status;
  uint64_t cursor = 0, seen = 0;
  while (max_pages == 0 || seen < max_pages) {
    uint64_t next =
        NextChunk(ranges, cursor, page_size, options_.chunk_pages, &pages);
    if (pages.empty()) break;
    status.assign(pages.size(), 0);
    if (int err = ops_->MovePages(pid, pages.size(), pages.data(), nullptr,
                                  status.data());
        err != 0) {
      return absl::UnknownError(
          absl::StrCat("pid ", pid, ": move_pages: ", std::strerror(err)));
    }
    for (int s : status) {
      if (s >= 0) ++per_node[s];
    }
    seen += pages.size();
    if (next == 0) break;
    cursor = next;
  }
  return per_node;
}

}  // namespace locus
