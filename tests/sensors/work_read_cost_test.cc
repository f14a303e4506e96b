// Not a check: the per-event cost of bpf/work.bpf.c's hooks for a socket
// read, as the kernel's own accounting (BPF_ENABLE_STATS) gives it, for the
// figures in that file's header. Disabled; run by hand as root:
//   work_counter_privileged_test --gtest_filter='*WorkReadCost*'
//     --gtest_also_run_disabled_tests
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
#include <cstring>
#include <memory>
#include <string>

#include "agent/sensors/work_counter.h"
#include "agent/sensors/work_counter_bpf.h"
#include "common/unique_fd.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

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

TEST(WorkReadCost, DISABLED_NsPerEvent) {
  std::unique_ptr<WorkCounter> counter = MakeWorkCounter({});
  if (counter->source() != kWorkSourceBpf) {
    GTEST_SKIP() << "BPF work counter not loadable: " << counter->source();
  }
  bpf_attr attr{};
  attr.enable_stats.type = BPF_STATS_RUN_TIME;
  UniqueFd stats(Bpf(BPF_ENABLE_STATS, &attr));
  ASSERT_TRUE(stats.valid()) << strerror(errno);
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  constexpr int kRounds = 20, kPerRound = 50000;
  constexpr uint64_t kEvents = uint64_t{kRounds} * kPerRound;
  std::string chunk(kPerRound, 'r');
  // Successful one-byte reads; watched, all but the first are in the middle
  // of one request (a lookup of the connection, nothing to write).
  auto reads = [&] {
    char c;
    for (int r = 0; r < kRounds; ++r) {
      ASSERT_EQ(write(b.get(), chunk.data(), chunk.size()), kPerRound);
      for (int i = 0; i < kPerRound; ++i) ASSERT_EQ(read(a.get(), &c, 1), 1);
    }
  };
  // The same in a child never watched (a thread that was has its task
  // storage, and a look that finds it costs more than one that finds none).
  auto child_reads = [&] {
    pid_t child = fork();
    ASSERT_GE(child, 0);
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
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  };
  auto others = [&] {
    for (uint64_t i = 0; i < kEvents; ++i) getppid();
  };
  // A process to watch while this one is not.
  pid_t idle = fork();
  ASSERT_GE(idle, 0);
  if (idle == 0) {
    pause();
    _exit(0);
  }
  for (int rep = 0; rep < 3; ++rep) {
    ASSERT_TRUE(counter->Watch({getpid()}).ok());
    Cost other = Measure(kEvents, others);
    Cost watched = Measure(kEvents, reads);
    Cost unwatched = Measure(kEvents, child_reads);
    ASSERT_TRUE(counter->Watch({idle}).ok());
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
}

}  // namespace
}  // namespace locus
