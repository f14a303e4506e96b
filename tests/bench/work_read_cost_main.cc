// locus_bench_work_read: the per-event cost of bpf/work.bpf.c's hooks for a
// socket read, as the kernel's own accounting (BPF_ENABLE_STATS) gives it,
// for the figures in that file's header. Not a test; run as root:
//   build/tests/bench/locus_bench_work_read
// Each figure is one loop of a million syscalls of one kind; the events of
// other processes during it are taken out at the mean cost per event over
// an idle window just before, so a busy machine blurs it less.
#include <linux/bpf.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "agent/sensors/work_counter.h"
#include "agent/sensors/work_counter_bpf.h"
#include "common/unique_fd.h"

namespace locus {
namespace {

// A step that must work, or the figures mean nothing: says which, exits.
void Must(bool ok, const char* what) {
  if (ok) return;
  fprintf(stderr, "locus_bench_work_read: %s: %s\n", what, strerror(errno));
  exit(1);
}

struct ProgStats {
  uint64_t run_time_ns = 0;
  uint64_t run_cnt = 0;
};

long Bpf(int cmd, bpf_attr* attr) {
  return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

// The stats of the loaded program named `name` (the last one listed).
ProgStats Stats(const char* name) {
  ProgStats out;
  uint32_t id = 0;
  while (true) {
    bpf_attr attr{};
    attr.start_id = id;
    if (Bpf(BPF_PROG_GET_NEXT_ID, &attr) != 0) break;
    id = attr.next_id;
    attr = {};
    attr.prog_id = id;
    UniqueFd fd(Bpf(BPF_PROG_GET_FD_BY_ID, &attr));
    if (!fd.valid()) continue;
    bpf_prog_info info{};
    attr = {};
    attr.info.bpf_fd = fd.get();
    attr.info.info_len = sizeof(info);
    attr.info.info = reinterpret_cast<uint64_t>(&info);
    if (Bpf(BPF_OBJ_GET_INFO_BY_FD, &attr) == 0 &&
        strncmp(info.name, name, sizeof(info.name)) == 0) {
      out = {info.run_time_ns, info.run_cnt};
    }
  }
  return out;
}

struct Cost {
  double enter = 0;
  double exit = 0;
};

// ns per event of `loop`, which makes `events` syscalls of one kind.
template <typename Loop>
Cost Measure(uint64_t events, Loop loop) {
  ProgStats e0 = Stats("work_enter"), x0 = Stats("work_exit");
  usleep(200000);
  ProgStats e1 = Stats("work_enter"), x1 = Stats("work_exit");
  loop();
  ProgStats e2 = Stats("work_enter"), x2 = Stats("work_exit");
  auto one = [&](ProgStats a, ProgStats b, ProgStats c) {
    double idle_mean = b.run_cnt > a.run_cnt
                           ? double(b.run_time_ns - a.run_time_ns) /
                                 double(b.run_cnt - a.run_cnt)
                           : 0;
    double others = double(c.run_cnt - b.run_cnt) - double(events);
    if (others < 0) others = 0;
    return (double(c.run_time_ns - b.run_time_ns) - others * idle_mean) /
           double(events);
  };
  return {one(e0, e1, e2), one(x0, x1, x2)};
}

int Run() {
  std::unique_ptr<WorkCounter> counter = MakeWorkCounter({});
  if (counter->source() != kWorkSourceBpf) {
    fprintf(stderr, "locus_bench_work_read: no BPF work counter: %s\n",
            counter->source().c_str());
    return 1;
  }
  bpf_attr attr{};
  attr.enable_stats.type = BPF_STATS_RUN_TIME;
  UniqueFd stats(Bpf(BPF_ENABLE_STATS, &attr));
  Must(stats.valid(), "BPF_ENABLE_STATS");
  int sv[2];
  Must(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0,
       "socketpair");
  UniqueFd a(sv[0]), b(sv[1]);
  constexpr int kRounds = 20, kPerRound = 50000;
  constexpr uint64_t kEvents = uint64_t{kRounds} * kPerRound;
  std::string chunk(kPerRound, 'r');
  // Successful one-byte reads; watched, all but the first are in the middle
  // of one request (a lookup of the connection, nothing to write).
  auto reads = [&] {
    char c;
    for (int r = 0; r < kRounds; ++r) {
      Must(write(b.get(), chunk.data(), chunk.size()) == kPerRound, "write");
      for (int i = 0; i < kPerRound; ++i)
        Must(read(a.get(), &c, 1) == 1, "read");
    }
  };
  // The same in a child never watched (a thread that was has its task
  // storage, and a look that finds it costs more than one that finds none).
  auto child_reads = [&] {
    pid_t child = fork();
    Must(child >= 0, "fork");
    if (child == 0) {
      char c;
      for (int r = 0; r < kRounds; ++r) {
        if (write(b.get(), chunk.data(), chunk.size()) != kPerRound) _exit(1);
        for (int i = 0; i < kPerRound; ++i) {
          if (read(a.get(), &c, 1) != 1) _exit(1);
        }
      }
      _exit(0);
    }
    int status = 0;
    Must(waitpid(child, &status, 0) == child, "waitpid");
    Must(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's reads");
  };
  auto others = [&] {
    for (uint64_t i = 0; i < kEvents; ++i) getppid();
  };
  // A process to watch while this one is not.
  pid_t idle = fork();
  Must(idle >= 0, "fork");
  if (idle == 0) {
    pause();
    _exit(0);
  }
  for (int rep = 0; rep < 3; ++rep) {
    Must(counter->Watch({getpid()}).ok(), "watching this process");
    Cost other = Measure(kEvents, others);
    Cost watched = Measure(kEvents, reads);
    Cost unwatched = Measure(kEvents, child_reads);
    Must(counter->Watch({idle}).ok(), "watching another process");
    Cost was_watched = Measure(kEvents, reads);
    printf(
        "ns/event entry/exit: other syscalls %.0f/%.0f, a read of a process "
        "not watched %.0f/%.0f (of one watched before %.0f/%.0f), of a "
        "watched one %.0f/%.0f\n",
        other.enter, other.exit, unwatched.enter, unwatched.exit,
        was_watched.enter, was_watched.exit, watched.enter, watched.exit);
  }
  counter->Stop();
  kill(idle, SIGKILL);
  waitpid(idle, nullptr, 0);
  return 0;
}

}  // namespace
}  // namespace locus

int main() { return locus::Run(); }
