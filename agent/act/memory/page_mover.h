// The page mover: moves processes' pages on its own threads, continuously
// between ticks, so the control loop only sets, replaces and cancels each
// process's move and reads back what was moved since it last asked. A
// bounded pool of threads moves different processes at once, never two on
// one process, all within one token bucket (the policy's MiB/s budget).
//
// A job is one process's move toward one node. Each tick the policy grants
// it up to max_bytes (within the free-memory reserve it keeps); the job
// moves that, a batch per move_pages call, and waits for the next grant.
// A pass that reached the last page and moved everything it found (none
// busy, none failed) is done: it is not walked again while the policy asks
// for the same target, unless the process's mappings changed (new or grown
// ranges, read from maps/numa_maps without looking up a single page), which
// is where new pages appear. A new target, a revert or a cancel drops the
// queued work before the job's next move_pages call.
#ifndef LOCUS_AGENT_ACT_MEMORY_PAGE_MOVER_H_
#define LOCUS_AGENT_ACT_MEMORY_PAGE_MOVER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "agent/act/kernel_ops.h"
#include "agent/act/memory/page_migrator.h"
#include "agent/act/memory/token_bucket.h"
#include "agent/act/result.h"
#include "common/clock.h"
#include "policy/plan.h"

namespace locus {

struct MoverOptions {
  // Chunk and batch sizes; max_bytes_per_sec is the shared bucket's rate.
  MigrationOptions migration;
  int threads = 2;
  // A job's turn on a thread before the next job gets it (checked between
  // move_pages calls).
  uint64_t slice_ns = 20'000'000;
  // The movers' nice value (their kernel time in move_pages included): bulk
  // work that yields the CPU to the control loop's tick and to the
  // workloads whose memory it moves, without being starved by them.
  int nice = 10;
};

// One mover per NUMA node (each moves toward or away from its own node's
// memory), at least 2 and at most 8.
int DefaultPageMovers(int nodes);

class PageMover {
 public:
  // `ops` and `clock` are borrowed; `ops` is called from the mover threads.
  PageMover(PageOps* ops, Clock* clock, MoverOptions options);
  // Cancels every job and joins the threads.
  ~PageMover();
  PageMover(const PageMover&) = delete;
  PageMover& operator=(const PageMover&) = delete;

  // Sets the process's move, or replaces it (another target cancels what
  // the old one had queued), allowing move.max_bytes (0: no cap) until the
  // next Set; returns what the mover did for it since the last Set.
  ActionResult Set(const MigratePages& move);
  // Drops the process's queued work; the call under way finishes.
  void Cancel(int32_t pid);
  void CancelAll();
  // Blocks until no job has work it can do now (tests, benchmarks).
  void WaitIdle();

 private:
  enum class State {
    kRunnable,  // has a grant and pages to look at
    kWaiting,   // grant spent, or a pass ended with pages left: next Set
    kCheck,     // done, asked again: look for new mappings
    kDone,      // a pass moved everything it found
    kEnded,     // failed or gone: `final` says why
  };
  struct Job;

  void Work();
  // The next job a thread may take now, or null.
  std::shared_ptr<Job> Pick() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // How long an idle thread sleeps: until the first job waiting for the
  // bucket may go on (1 ms to 1 s).
  uint64_t NextRefillNs() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Slice(Job& job);
  void Check(Job& job);
  void Account(Job& job, const ActionResult& result,
               const PassProgress& progress) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  ActionResult Report(Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Regrant(Job& job, uint64_t max_bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CancelLocked(int32_t pid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  PageOps* ops_;
  Clock* clock_;
  MoverOptions options_;
  const uint64_t page_size_;
  TokenBucket bucket_;
  absl::Mutex mu_;
  absl::CondVar work_;  // a job became runnable, or stop
  absl::CondVar idle_;  // a slice ended
  std::map<int32_t, std::shared_ptr<Job>> jobs_ ABSL_GUARDED_BY(mu_);
  std::set<int32_t> busy_ ABSL_GUARDED_BY(mu_);  // pids on a thread now
  int32_t turn_ ABSL_GUARDED_BY(mu_) = 0;        // round robin among jobs
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_MEMORY_PAGE_MOVER_H_
