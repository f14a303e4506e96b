// locusd as a real process for tests, and a family of target processes for
// it to act on (tests/fault/fault_target_main.cc). The daemon runs with its
// socket, journal and policy in a test directory and this one-node machine
// shown as two nodes (tests/fixtures/split2: CPU 0 is node 0, CPU 1 node 1),
// so that it has something to move.
#ifndef LOCUS_TESTS_COMMON_LOCUSD_PROCESS_H_
#define LOCUS_TESTS_COMMON_LOCUSD_PROCESS_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "locus/v1/agent.grpc.pb.h"

namespace locus {

// A policy selecting the workers of `comm` (fault_target's), thread
// placement only (one real node: no memory or IRQ to move), short dwell and
// hold-down so a test sees retries, at most `max_moves` workers per tick.
std::string FaultPolicy(const std::string& comm, const std::string& mode,
                        int max_moves);

class LocusdProcess {
 public:
  // Files go to `dir`: locusd.sock, journal, policy.yaml, locusd.log.
  LocusdProcess(std::string locusd_path, std::string dir);
  ~LocusdProcess();  // SIGKILL if still running
  LocusdProcess(const LocusdProcess&) = delete;
  LocusdProcess& operator=(const LocusdProcess&) = delete;

  std::string socket() const { return dir_ + "/locusd.sock"; }
  std::string journal() const { return journal_; }
  std::string policy() const { return dir_ + "/policy.yaml"; }
  std::string log_path() const { return dir_ + "/locusd.log"; }
  void set_journal(std::string path) { journal_ = std::move(path); }

  // Starts the daemon with the split2 topology, the files above, and
  // `extra` flags (later flags win).
  void Start(const std::vector<std::string>& extra);
  // Until GetStatus answers; false if the daemon exited or time ran out.
  bool WaitReady(absl::Duration timeout = absl::Seconds(30));
  absl::StatusOr<v1::AgentStatus> Status();
  // The next `count` metrics messages of the stream.
  absl::StatusOr<std::vector<v1::Metrics>> Watch(int count,
                                                 absl::Duration timeout);
  // Reads the stream until `done` holds for a message (returned), or the
  // stream ends or `timeout` passes (NOT_FOUND, DEADLINE_EXCEEDED).
  absl::StatusOr<v1::Metrics> WatchUntil(
      const std::function<bool(const v1::Metrics&)>& done,
      absl::Duration timeout);
  // Signals and reaps: the exit code, or -signal.
  int Stop(int signal);
  bool running();
  pid_t pid() const { return pid_; }
  std::string log() const;

  // `locusd --restore` on this journal: exit code; its output in *out.
  int Restore(std::string* out);

 private:
  std::unique_ptr<v1::Agent::Stub> Stub();

  const std::string locusd_path_;
  const std::string dir_;
  std::string journal_;
  pid_t pid_ = -1;
};

// fault_target COMM WORKERS THREADS [churn], waited for until ready.
class TargetFamily {
 public:
  TargetFamily(const std::string& binary, const std::string& comm, int workers,
               int threads, const std::string& log, bool churn = false);
  ~TargetFamily();  // kills the master; the workers die with it
  TargetFamily(const TargetFamily&) = delete;
  TargetFamily& operator=(const TargetFamily&) = delete;

  bool ok() const { return !workers_.empty(); }
  pid_t master() const { return master_; }
  const std::vector<pid_t>& workers() const { return workers_; }

 private:
  pid_t master_ = -1;
  std::vector<pid_t> workers_;
};

}  // namespace locus

#endif  // LOCUS_TESTS_COMMON_LOCUSD_PROCESS_H_
