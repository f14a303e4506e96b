#include "agent/act/memory/page_migrator.h"

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/os_error.h"

namespace locus {

MigrationOptions MigrationOptionsFor(uint32_t budget_mb_per_s,
                                     uint64_t tick_ns) {
  MigrationOptions options;
  options.max_bytes_per_sec = uint64_t{budget_mb_per_s} << 20;
  options.time_budget_ns = tick_ns / 2;
  return options;
}

PageMigrator::PageMigrator(PageOps* ops, Clock* clock, MigrationOptions options,
                           bool dry_run, TokenBucket* bucket)
    : clock_(clock),
      options_(options),
      dry_run_(dry_run),
      lookup_(ops, options.chunk_pages),
      bucket_(bucket) {
  if (options_.move_batch_pages == 0) options_.move_batch_pages = 1;
  if (bucket_ == nullptr) {
    own_bucket_ =
        std::make_unique<TokenBucket>(clock, options_.max_bytes_per_sec);
    bucket_ = own_bucket_.get();
  }
}

// One Apply: from the pass's cursor, queries a chunk of pages per call and
// gathers the ones to move into a batch, moved a call at a time, until the
// token bucket, max_bytes or the time budget stops it or the pass completes.
class PageMigrator::Run {
 public:
  // `granted`: the bytes taken from the bucket for this walk.
  Run(PageMigrator* migrator, const MigratePages& move, bool dry_run,
      const std::string& who, Pass* pass, uint64_t granted,
      const std::atomic<bool>* cancel);

  // Walks and leaves the pass where it stopped; a result only when a
  // move_pages call failed as a whole.
  std::optional<ActionResult> Walk();
  // What the walk did, once it is over.
  ActionResult Result() const;
  void Report(PassProgress* progress) const;
  uint64_t moved_bytes() const { return moved_bytes_; }
  bool cancelled() const { return cancelled_; }

 private:
  bool Cancelled() {
    if (cancel_ == nullptr || !cancel_->load()) return false;
    cancelled_ = true;
    return true;
  }
  // Whether the batch plus what was moved fills the byte budget.
  bool RateSpent() const { return moved_ + batch_pages_ >= budget_pages_; }
  // Whether a budget ends the walk before the next chunk (says which).
  bool BudgetSpent();
  // Takes the queried chunk's units that are to move into the batch, moving
  // it whenever it fills; at the byte budget sets *resume to the first unit
  // not taken. A unit goes whole while any of the budget is left, so a THP
  // moves on a grant under 2 MiB (the bucket is charged the overshoot). 0 or
  // the errno of a move.
  int Pick(uint64_t* resume);
  // Moves the batch; 0 or the errno of the call.
  int Flush();
  void Tally(int page_status, uint32_t pages);
  ActionResult MoveError(int err);
  void EndPass();
  std::string Summary() const;

  PageMigrator& migrator_;
  const MigratePages& move_;
  const bool dry_run_;
  const std::string& who_;
  Pass& pass_;
  const uint64_t page_size_;
  const uint64_t budget_;  // bytes
  const uint64_t budget_pages_;
  const uint64_t start_ns_;
  uint64_t cursor_;
  const bool from_start_;
  const std::atomic<bool>* cancel_;
  bool cancelled_ = false;
  uint64_t batch_cursor_;  // where the batch's first chunk started
  // In base pages (a THP counts 512), as the metrics count them.
  uint64_t scanned_ = 0, candidates_ = 0, moved_ = 0, failed_ = 0, shared_ = 0,
           busy_ = 0;
  uint64_t moved_bytes_ = 0;  // what the kernel moved (MovedBytes)
  bool wrapped_ = false;
  std::string stop_ = "budget";
  uint64_t elapsed_ns_ = 0;
  std::vector<PageUnit> units_;  // the chunk queried
  std::vector<int> status_;
  std::vector<PageUnit> batch_;  // found, not moved yet
  uint64_t batch_pages_ = 0;
  std::vector<int> moved_status_;
};

PageMigrator::Run::Run(PageMigrator* migrator, const MigratePages& move,
                       bool dry_run, const std::string& who, Pass* pass,
                       uint64_t granted, const std::atomic<bool>* cancel)
    : migrator_(*migrator),
      move_(move),
      dry_run_(dry_run),
      who_(who),
      pass_(*pass),
      page_size_(migrator->lookup_.page_size()),
      budget_(granted),
      budget_pages_(budget_ / page_size_),
      start_ns_(migrator->clock_->NowNs()),
      cursor_(pass->cursor),
      from_start_(cursor_ == 0),
      cancel_(cancel),
      batch_cursor_(cursor_) {}

bool PageMigrator::Run::BudgetSpent() {
  const MigrationOptions& options = migrator_.options_;
  if (Cancelled()) {
    stop_ = "cancelled";
    return true;
  }
  if (!dry_run_ && RateSpent()) {
    stop_ =
        absl::StrCat("rate limit ", migrator_.bucket_->rate() >> 20, " MiB/s");
    if (move_.max_bytes > 0 && budget_ == move_.max_bytes) stop_ = "max_bytes";
    return true;
  }
  if (migrator_.clock_->NowNs() - start_ns_ >= options.time_budget_ns) {
    stop_ =
        absl::StrCat("time budget ", options.time_budget_ns / 1000000, " ms");
    return true;
  }
  return false;
}

std::optional<ActionResult> PageMigrator::Run::Walk() {
  while (!BudgetSpent()) {
    uint64_t next = 0;
    // No more looked up than the grant can still move (a dry run: a chunk).
    const uint64_t left =
        dry_run_ ? 0 : budget_pages_ - (moved_ + batch_pages_);
    int err = migrator_.lookup_.Chunk(move_.pid, pass_.ranges, cursor_, left,
                                      &units_, &next);
    if (err == 0 && units_.empty()) {
      EndPass();
      break;
    }
    if (err == 0) err = migrator_.lookup_.Query(move_.pid, units_, &status_);
    if (err != 0) {
      pass_.cursor = batch_cursor_;  // the unmoved batch is found again
      return ResultOfErrno(err, absl::StrCat(who_, ": move_pages"),
                           kPageQueryErrnos);
    }
    for (const PageUnit& unit : units_) scanned_ += unit.pages;
    if (batch_.empty()) batch_cursor_ = cursor_;
    uint64_t resume = next;  // where the next chunk starts
    if (int err = Pick(&resume); err != 0) return MoveError(err);
    if (next == 0 && resume == 0) {
      EndPass();
      break;
    }
    cursor_ = resume;
  }
  if (cancelled_) return std::nullopt;  // the pass is forgotten
  if (int err = Flush(); err != 0) return MoveError(err);
  pass_.cursor = cursor_;
  elapsed_ns_ = migrator_.clock_->NowNs() - start_ns_;
  return std::nullopt;
}

void PageMigrator::Run::EndPass() {
  cursor_ = 0;
  wrapped_ = true;
  stop_ = "pass complete";
}

int PageMigrator::Run::Pick(uint64_t* resume) {
  for (size_t i = 0; i < units_.size(); ++i) {
    const PageUnit& unit = units_[i];
    int node = status_[i];
    if (node < 0 || node == move_.to_node) continue;  // absent or there
    if (move_.from_node >= 0 && node != move_.from_node) continue;
    if (absl::c_linear_search(move_.leave_nodes, node)) continue;
    if (!dry_run_ && RateSpent()) {
      *resume = unit.addr;
      break;
    }
    candidates_ += unit.pages;
    if (dry_run_) continue;
    batch_.push_back(unit);
    batch_pages_ += unit.pages;
    if (batch_pages_ >= migrator_.options_.move_batch_pages) {
      if (int err = Flush(); err != 0) return err;
      batch_cursor_ = unit.addr + UnitBytes(unit, page_size_);
    }
  }
  return 0;
}

int PageMigrator::Run::Flush() {
  if (dry_run_ || batch_.empty() || Cancelled()) return 0;
  if (int err = migrator_.lookup_.Move(move_.pid, batch_, move_.to_node,
                                       &moved_status_);
      err != 0 && err != ENOENT) {
    return err;
  }
  moved_bytes_ +=
      MovedBytes(batch_, moved_status_.data(), move_.to_node, page_size_);
  moved_ = moved_bytes_ / page_size_;
  for (size_t i = 0; i < batch_.size(); ++i) {
    Tally(moved_status_[i], batch_[i].pages);
  }
  batch_.clear();
  batch_pages_ = 0;
  return 0;
}

// What did not move, in base pages (what moved is in moved_bytes_).
void PageMigrator::Run::Tally(int page_status, uint32_t pages) {
  if (page_status == move_.to_node) return;
  if (page_status == -EACCES) {
    // Mapped by other processes too (pages a worker still shares with its
    // master since fork): MPOL_MF_MOVE leaves them, by design. Not this
    // process's to move, so not a failure.
    shared_ += pages;
  } else if (page_status == -EBUSY || page_status == -EAGAIN ||
             page_status == -ENOENT) {
    // Taken by someone else meanwhile (NUMA balancing migrating the same
    // pages, off the LRU, or a migration entry in place of the page):
    // retried on a later pass, and not a failure of ours.
    busy_ += pages;
  } else {
    failed_ += pages;  // -ENOMEM, ...: retried on a later pass
  }
}

ActionResult PageMigrator::Run::MoveError(int err) {
  pass_.cursor = batch_cursor_;
  return ResultOfErrno(
      err, absl::StrCat(who_, ": move_pages to node ", move_.to_node),
      kMoveErrnos);
}

std::string PageMigrator::Run::Summary() const {
  const uint64_t found = dry_run_ ? candidates_ : moved_;
  return absl::StrFormat(
      "%d of %d pages scanned to node %d (%.1f MiB) in %.1f ms, %d failed%s; "
      "stopped: %s",
      found, scanned_, move_.to_node,
      static_cast<double>(found * page_size_) / (1 << 20),
      static_cast<double>(elapsed_ns_) / 1e6, failed_,
      absl::StrCat(
          shared_ > 0 ? absl::StrCat(", ", shared_, " shared left") : "",
          busy_ > 0 ? absl::StrCat(", ", busy_, " busy") : ""),
      stop_);
}

ActionResult PageMigrator::Run::Result() const {
  ActionResult result;
  result.pages_moved = moved_;
  result.bytes_moved = moved_bytes_;
  if (dry_run_) {
    result.outcome = Outcome::kDryRun;
    result.message = absl::StrCat(who_, ": would move ", Summary());
  } else if (moved_ == 0 && busy_ > 0 && candidates_ == shared_ + busy_) {
    // Everything found was busy elsewhere: not done, not an error either;
    // the next tick carries on.
    result.outcome = Outcome::kUnchanged;
    result.message = absl::StrCat(
        who_, ": none of ", candidates_, " pages moved to node ", move_.to_node,
        ": ", busy_, " busy (being moved by someone else); stopped: ", stop_);
  } else if (moved_ == 0 && candidates_ == shared_) {
    // Nothing found (or only pages shared with other processes): after a
    // whole pass the process is done; mid-pass the next tick carries on
    // from the cursor.
    result.outcome = Outcome::kUnchanged;
    result.nothing_left = wrapped_ && from_start_;
    result.message = absl::StrCat(
        who_, ": nothing to move to node ", move_.to_node, " (", scanned_,
        " pages scanned",
        shared_ > 0
            ? absl::StrCat(", ", shared_, " shared with other processes")
            : "",
        result.nothing_left ? ", pass complete" : "", "; stopped: ", stop_,
        ")");
  } else if (moved_ == 0 && budget_pages_ > 0) {
    result.outcome = Outcome::kError;
    result.message = absl::StrCat(who_, ": none of ", candidates_,
                                  " pages could be moved to node ",
                                  move_.to_node, " (busy or no memory there)");
  } else {
    result.outcome = Outcome::kApplied;
    result.message = absl::StrCat(who_, ": moved ", Summary());
  }
  return result;
}

void PageMigrator::Run::Report(PassProgress* progress) const {
  progress->pass_started = from_start_;
  progress->pass_complete = wrapped_ && !cancelled_;
  progress->left = busy_ + failed_;
  progress->rate_limited = !dry_run_ && budget_pages_ == 0;
  if (progress->pass_complete) progress->ranges = pass_.ranges;
}

ActionResult PageMigrator::Apply(const MigratePages& move, bool dry_run) {
  return Apply(move, dry_run, nullptr, nullptr);
}

ActionResult PageMigrator::Apply(const MigratePages& move, bool dry_run,
                                 const std::atomic<bool>* cancel,
                                 PassProgress* progress) {
  const std::string who = absl::StrCat("pid ", move.pid);
  if (move.to_node < 0) {
    return MakeResult(Outcome::kError, absl::StrCat(who, ": no target node"));
  }
  Pass& pass = passes_[move.pid];
  if (pass.cursor == 0 || pass.ranges.empty()) {
    if (int err = lookup_.Ranges(move.pid, &pass.ranges); err != 0) {
      passes_.erase(move.pid);
      return ResultOfErrno(err, absl::StrCat(who, ": maps"), kTaskErrnos);
    }
  }
  // A dry run moves nothing, so it takes nothing from the bucket.
  const uint64_t want = move.max_bytes > 0 ? move.max_bytes : UINT64_MAX;
  const uint64_t granted = dry_run ? 0 : bucket_->Take(want);
  Run run(this, move, dry_run, who, &pass, granted, cancel);
  std::optional<ActionResult> failed = run.Walk();
  Settle(granted, run.moved_bytes());
  if (progress != nullptr) run.Report(progress);
  if (run.cancelled()) {
    passes_.erase(move.pid);
    ActionResult result = run.Result();
    result.outcome = Outcome::kUnchanged;
    result.message = absl::StrCat(who, ": cancelled; ", result.message);
    return result;
  }
  if (pass.cursor == 0) pass.ranges.clear();  // read afresh for the next pass
  if (failed) return *failed;
  return run.Result();
}

void PageMigrator::Settle(uint64_t granted, uint64_t moved) {
  if (moved <= granted) {
    bucket_->Return(granted - moved);
  } else {
    bucket_->Charge(moved - granted);
  }
}

absl::StatusOr<std::map<int, uint64_t>> PageMigrator::QueryNodes(
    int32_t pid, uint64_t max_pages) {
  std::vector<MemRange> ranges;
  if (int err = lookup_.Ranges(pid, &ranges); err != 0) {
    return absl::NotFoundError(
        ErrnoMessage(absl::StrCat("pid ", pid, ": maps"), err));
  }
  std::map<int, uint64_t> per_node;
  std::vector<PageUnit> units;
  std::vector<int> status;
  uint64_t cursor = 0, seen = 0;
  while (max_pages == 0 || seen < max_pages) {
    uint64_t next = 0;
    int err = lookup_.Chunk(pid, ranges, cursor, 0, &units, &next);
    if (err == 0 && units.empty()) break;
    if (err == 0) err = lookup_.Query(pid, units, &status);
    if (err != 0) {
      return absl::UnknownError(
          ErrnoMessage(absl::StrCat("pid ", pid, ": move_pages"), err));
    }
    for (size_t i = 0; i < units.size(); ++i) {
      if (status[i] >= 0) per_node[status[i]] += units[i].pages;
      seen += units[i].pages;
    }
    if (next == 0) break;
    cursor = next;
  }
  return per_node;
}

}  // namespace locus
