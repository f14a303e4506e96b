#include "agent/act/memory/page_mover.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"

namespace locus {
namespace {

// How long a job is kept without being asked for (its process exited, or
// the policy stopped asking): after that the pid is treated as new.
constexpr uint64_t kForgetDoneNs = 600'000'000'000ull;

bool SameRanges(const std::vector<MemRange>& a,
                const std::vector<MemRange>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const MemRange& x, const MemRange& y) {
                      return x.start == y.start && x.end == y.end;
                    });
}

std::string MiBOf(uint64_t bytes) {
  return absl::StrFormat("%.1f MiB", static_cast<double>(bytes) / (1 << 20));
}

}  // namespace

struct PageMover::Job {
  Job(const MigratePages& m, PageOps* ops, Clock* clock,
      const MigrationOptions& options, TokenBucket* bucket)
      : move(m), migrator(ops, clock, options, false, bucket) {}

  MigratePages move;
  PageMigrator migrator;  // where its pass stands
  std::atomic<bool> cancel{false};
  State state = State::kRunnable;
  uint64_t allowance = 0;      // bytes it may move until the next Set
  uint64_t not_before_ns = 0;  // the bucket is empty until then
  uint64_t asked_ns = 0;       // the last Set
  // Since the last Set.
  uint64_t pages = 0, bytes = 0;
  std::string last;  // the last slice's message
  // Over the pass under way.
  uint64_t pass_left = 0;  // busy or failed: retried by the next pass
  std::vector<MemRange> done_ranges;  // the done pass walked these
  bool told_done = false;             // a Set has reported nothing left
  ActionResult final;                 // kEnded: why
};

int DefaultPageMovers(int nodes) { return std::clamp(nodes, 2, 8); }

PageMover::PageMover(PageOps* ops, Clock* clock, MoverOptions options)
    : ops_(ops),
      clock_(clock),
      options_(options),
      page_size_(ops->PageSize()),
      bucket_(clock, options.migration.max_bytes_per_sec) {
  options_.migration.time_budget_ns = options_.slice_ns;
  for (int i = 0; i < std::max(options_.threads, 1); ++i) {
    threads_.emplace_back([this] { Work(); });
  }
}

PageMover::~PageMover() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    for (auto& [pid, job] : jobs_) job->cancel = true;
    work_.SignalAll();
  }
  for (std::thread& thread : threads_) thread.join();
}

ActionResult PageMover::Set(const MigratePages& move) {
  absl::MutexLock lock(&mu_);
  const uint64_t now = clock_->NowNs();
  std::erase_if(jobs_, [&](const auto& entry) {
    const Job& job = *entry.second;
    return !busy_.count(entry.first) && job.asked_ns + kForgetDoneNs < now;
  });
  auto it = jobs_.find(move.pid);
  if (it != jobs_.end() && (it->second->move.to_node != move.to_node ||
                            it->second->move.from_node != move.from_node ||
                            it->second->move.leave_nodes != move.leave_nodes)) {
    CancelLocked(move.pid);  // moved again: the old target's queue goes
    it = jobs_.end();
  }
  if (it == jobs_.end()) {
    auto job =
        std::make_shared<Job>(move, ops_, clock_, options_.migration, &bucket_);
    job->asked_ns = now;
    Regrant(*job, move.max_bytes);
    jobs_[move.pid] = job;
    work_.Signal();
    ActionResult queued = MakeResult(
        Outcome::kApplied,
        absl::StrCat("pid ", move.pid, ": queued on the page mover (up to ",
                     move.max_bytes > 0 ? MiBOf(move.max_bytes) : "all",
                     " to node ", move.to_node, ")"));
    return queued;
  }
  Job& job = *it->second;
  job.asked_ns = now;
  ActionResult result = Report(job);
  if (job.state == State::kEnded) {
    jobs_.erase(it);
    return result;
  }
  Regrant(job, move.max_bytes);
  return result;
}

// What the job did since the last Set, and clears it.
ActionResult PageMover::Report(Job& job) {
  const std::string who = absl::StrCat("pid ", job.move.pid);
  ActionResult result;
  if (job.state == State::kEnded) {
    result = job.final;
  } else if (job.pages > 0) {
    result.outcome = Outcome::kApplied;
    result.message =
        absl::StrCat(who, ": moved ", job.pages, " pages (", MiBOf(job.bytes),
                     ") to node ", job.move.to_node, " since the last tick; ",
                     job.state == State::kDone ? "pass complete" : "moving",
                     " (", job.last, ")");
  } else if (job.state == State::kDone) {
    result.outcome = Outcome::kUnchanged;
    result.nothing_left = true;
    result.message =
        absl::StrCat(who, ": nothing left to move to node ", job.move.to_node,
                     ": the last pass moved every page it found",
                     job.told_done ? " and no mapping changed since" : "", " (",
                     job.last, ")");
    job.told_done = true;
  } else {
    // Under way (a call in flight, a pass looking for pages, the next pass
    // due): the move goes on, so it is applied, with nothing to count yet.
    result.outcome = Outcome::kApplied;
    result.message =
        absl::StrCat(who, ": moving, nothing moved since the last tick (",
                     job.last.empty() ? "queued" : job.last, ")");
  }
  result.pages_moved = job.pages;
  result.bytes_moved = job.bytes;
  job.pages = job.bytes = 0;
  return result;
}

// A new grant from this tick's plan: the job carries on, or starts the
// next pass, or (done and asked again) looks for new mappings.
void PageMover::Regrant(Job& job, uint64_t max_bytes) {
  job.allowance = max_bytes > 0 ? max_bytes : UINT64_MAX;
  if (job.state == State::kWaiting) job.state = State::kRunnable;
  if (job.state == State::kDone && job.told_done) job.state = State::kCheck;
  if (job.state == State::kRunnable || job.state == State::kCheck) {
    work_.Signal();
  }
}

void PageMover::Cancel(int32_t pid) {
  absl::MutexLock lock(&mu_);
  CancelLocked(pid);
}

void PageMover::CancelAll() {
  absl::MutexLock lock(&mu_);
  while (!jobs_.empty()) CancelLocked(jobs_.begin()->first);
}

void PageMover::CancelLocked(int32_t pid) {
  auto it = jobs_.find(pid);
  if (it == jobs_.end()) return;
  // A thread that has the job holds its own reference and drops it after
  // its call under way; the flag stops it before the next one.
  it->second->cancel = true;
  jobs_.erase(it);
}

bool PageMover::Idle() const {
  const uint64_t now = clock_->NowNs();
  for (const auto& [pid, job] : jobs_) {
    if (busy_.count(pid)) return false;
    const bool wants =
        job->state == State::kRunnable || job->state == State::kCheck;
    if (wants && job->not_before_ns <= now) return false;
  }
  return busy_.empty();
}

void PageMover::WaitIdle() {
  absl::MutexLock lock(&mu_);
  while (!Idle()) idle_.WaitWithTimeout(&mu_, absl::Milliseconds(10));
}

uint64_t PageMover::NextRefillNs() const {
  constexpr uint64_t kMinNs = 1'000'000, kMaxNs = 1'000'000'000;
  const uint64_t now = clock_->NowNs();
  uint64_t wait = kMaxNs;
  for (const auto& [pid, job] : jobs_) {
    if (job->state == State::kRunnable && job->not_before_ns > now) {
      wait = std::min(wait, job->not_before_ns - now);
    }
  }
  return std::max(wait, kMinNs);
}

std::shared_ptr<PageMover::Job> PageMover::Pick() {
  if (jobs_.empty()) return nullptr;
  const uint64_t now = clock_->NowNs();
  // From the pid after the last one taken, so every job gets its turn.
  auto start = jobs_.upper_bound(turn_);
  for (size_t n = 0; n < jobs_.size(); ++n, ++start) {
    if (start == jobs_.end()) start = jobs_.begin();
    const std::shared_ptr<Job>& job = start->second;
    if (busy_.count(start->first)) continue;  // one thread per process
    if (job->state != State::kRunnable && job->state != State::kCheck) {
      continue;
    }
    if (job->not_before_ns > now) continue;
    turn_ = start->first;
    return job;
  }
  return nullptr;
}

void PageMover::Work() {
  // Linux keeps the nice value per thread: `who` 0 is this one. Raising it
  // needs no privilege; should it fail, the mover runs at the agent's.
  setpriority(PRIO_PROCESS, 0, options_.nice);
  absl::MutexLock lock(&mu_);
  while (!stop_) {
    std::shared_ptr<Job> job = Pick();
    if (job == nullptr) {
      // A job waiting for the bucket is looked at again when it refills;
      // with nothing to do the thread sleeps until a Set wakes it.
      work_.WaitWithTimeout(&mu_, absl::Nanoseconds(NextRefillNs()));
      continue;
    }
    const int32_t pid = job->move.pid;
    const bool check = job->state == State::kCheck;
    busy_.insert(pid);
    mu_.Unlock();
    check ? Check(*job) : Slice(*job);
    mu_.Lock();
    busy_.erase(pid);
    idle_.SignalAll();
  }
}

// Done and asked again: a changed mapping is where new pages are.
void PageMover::Check(Job& job) {
  std::vector<MemRange> ranges;
  const int err = ops_->Ranges(job.move.pid, &ranges);
  absl::MutexLock lock(&mu_);
  if (job.cancel) return;
  if (err != 0) {
    job.final = ResultOfErrno(err, absl::StrCat("pid ", job.move.pid, ": maps"),
                              kTaskErrnos);
    job.state = State::kEnded;
  } else if (SameRanges(ranges, job.done_ranges)) {
    job.state = State::kDone;
  } else {
    job.state = State::kRunnable;  // a new pass from the first page
    job.told_done = false;
  }
}

void PageMover::Slice(Job& job) {
  MigratePages move;
  {
    absl::MutexLock lock(&mu_);
    // An empty bucket: wait for it here rather than start a pass (which
    // reads the process's mappings) only to stop before the first page.
    if (uint64_t wait = bucket_.WaitNs(page_size_); wait > 0) {
      job.not_before_ns = clock_->NowNs() + wait;
      return;
    }
    move = job.move;
    move.max_bytes = std::min<uint64_t>(
        job.allowance, options_.migration.move_batch_pages * page_size_);
  }
  PassProgress progress;
  ActionResult result = job.migrator.Apply(move, false, &job.cancel, &progress);
  absl::MutexLock lock(&mu_);
  Account(job, result, progress);
}

void PageMover::Account(Job& job, const ActionResult& result,
                        const PassProgress& progress) {
  job.pages += result.pages_moved;
  job.bytes += result.bytes_moved;
  job.allowance -= std::min(job.allowance, result.bytes_moved);
  job.last = result.message;
  if (progress.pass_started) job.pass_left = 0;
  job.pass_left += progress.left;
  if (job.cancel) return;
  switch (result.outcome) {
    case Outcome::kApplied:
    case Outcome::kUnchanged:
      break;
    default:  // gone, forbidden, failed: the next Set says so and ends it
      job.final = result;
      job.final.message =
          absl::StrCat(result.message, " (", job.pages, " pages moved before)");
      job.state = State::kEnded;
      return;
  }
  if (progress.pass_complete) {
    // Pages busy or failed are retried by the next pass, at the next grant.
    const bool clean = job.pass_left == 0;
    job.state = clean ? State::kDone : State::kWaiting;
    job.told_done = false;
    if (clean) job.done_ranges = progress.ranges;
  } else if (progress.rate_limited) {
    job.not_before_ns = clock_->NowNs() + bucket_.WaitNs(page_size_);
  } else if (job.allowance < page_size_) {
    job.state = State::kWaiting;
  }
}

}  // namespace locus
