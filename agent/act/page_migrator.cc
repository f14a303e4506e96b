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

PageMigrator::PageMigrator(PageOps* ops, Clock* clock, MigrationOptions options,
                           bool dry_run)
    : ops_(ops), clock_(clock), options_(options), dry_run_(dry_run) {
  if (options_.chunk_pages == 0) options_.chunk_pages = 1;
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
  std::vector<MemRange> ranges;
  if (int err = ops_->Ranges(move.pid, &ranges); err != 0) {
    return MakeResult(err == ESRCH ? Outcome::kGone : Outcome::kError,
                      absl::StrCat(who, ": maps: ", std::strerror(err)));
  }
  Refill();
  const uint64_t page_size = ops_->PageSize();
  uint64_t budget = static_cast<uint64_t>(tokens_);
  if (move.max_bytes > 0) budget = std::min(budget, move.max_bytes);
  const uint64_t budget_pages = budget / page_size;

  const uint64_t start_ns = clock_->NowNs();
  uint64_t cursor = cursor_[move.pid];
  const bool from_start = cursor == 0;
  uint64_t scanned = 0, candidates = 0, moved = 0, failed = 0;
  bool wrapped = false;
  std::string stop = "budget";
  std::vector<void*> pages;
  std::vector<int> status;
  std::vector<void*> to_move;
  std::vector<int> nodes;
  while (true) {
    if (!dry_run && moved >= budget_pages) {
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
      cursor_[move.pid] = cursor;
      Outcome outcome = err == ESRCH   ? Outcome::kGone
                        : err == EPERM ? Outcome::kForbidden
                                       : Outcome::kError;
      return MakeResult(
          outcome, absl::StrCat(who, ": move_pages: ", std::strerror(err)));
    }
    scanned += pages.size();
    to_move.clear();
    uint64_t resume = next;  // where the next chunk starts
    for (size_t i = 0; i < pages.size(); ++i) {
      int node = status[i];
      if (node < 0 || node == move.to_node) continue;  // absent or there
      if (move.from_node >= 0 && node != move.from_node) continue;
      if (!dry_run && moved + to_move.size() >= budget_pages) {
        resume = reinterpret_cast<uint64_t>(pages[i]);
        break;
      }
      to_move.push_back(pages[i]);
    }
    candidates += to_move.size();
    if (!dry_run && !to_move.empty()) {
      nodes.assign(to_move.size(), move.to_node);
      status.assign(to_move.size(), 0);
      if (int err = ops_->MovePages(move.pid, to_move.size(), to_move.data(),
                                    nodes.data(), status.data());
          err != 0 && err != ENOENT) {
        cursor_[move.pid] = cursor;
        return MakeResult(err == ESRCH ? Outcome::kGone : Outcome::kError,
                          absl::StrCat(who, ": move_pages to node ",
                                       move.to_node, ": ", std::strerror(err)));
      }
      for (int s : status) {
        if (s == move.to_node) {
          ++moved;
        } else {
          ++failed;  // -EBUSY, -ENOMEM, ...: retried on a later pass
        }
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
  cursor_[move.pid] = cursor;
  if (!dry_run) tokens_ -= static_cast<double>(moved * page_size);
  const uint64_t elapsed = clock_->NowNs() - start_ns;

  ActionResult result;
  result.pages_moved = moved;
  result.bytes_moved = moved * page_size;
  const std::string summary = absl::StrFormat(
      "%d of %d pages scanned to node %d (%.1f MiB) in %.1f ms, %d failed; "
      "stopped: %s",
      dry_run ? candidates : moved, scanned, move.to_node,
      static_cast<double>((dry_run ? candidates : moved) * page_size) /
          (1 << 20),
      static_cast<double>(elapsed) / 1e6, failed, stop);
  if (dry_run) {
    result.outcome = Outcome::kDryRun;
    result.message = absl::StrCat(who, ": would move ", summary);
  } else if (moved == 0 && candidates == 0) {
    // Nothing found: after a whole pass the process is done; mid-pass the
    // next tick carries on from the cursor.
    result.outcome = Outcome::kUnchanged;
    result.message = absl::StrCat(
        who, ": nothing to move to node ", move.to_node, " (", scanned,
        " pages scanned", wrapped && from_start ? ", pass complete" : "",
        "; stopped: ", stop, ")");
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
