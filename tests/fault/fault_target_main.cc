// A stand-in target for the fault tests: a master named COMM that forks
// WORKERS worker processes of THREADS threads each. Every thread runs a
// fraction of a millisecond every 10 ms, enough for the scheduler to spread
// it over the CPUs (so a policy wants to pin it) without loading a shared
// machine. Prints "ready PID..." (the workers) once all run.
//
// With "churn", the master also starts short-lived threads without end
// (about a thousand a second, each waking a few times before it exits): the
// workload that fills the sensors' per-thread maps.
//
// Workers die with the master (PR_SET_PDEATHSIG), so a killed test leaves
// nothing behind.
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

void Spin(std::chrono::microseconds how_long) {
  auto end = std::chrono::steady_clock::now() + how_long;
  std::atomic<unsigned> sink{0};
  while (std::chrono::steady_clock::now() < end) sink.fetch_add(1);
}

[[noreturn]] void LightLoad() {
  for (;;) {
    Spin(std::chrono::microseconds(300));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

[[noreturn]] void Worker(int threads, int ready_fd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  for (int i = 1; i < threads; ++i) std::thread(LightLoad).detach();
  char byte = 1;
  (void)!write(ready_fd, &byte, 1);
  close(ready_fd);
  LightLoad();
}

[[noreturn]] void Churn() {
  for (;;) {
    std::vector<std::thread> batch;
    for (int i = 0; i < 16; ++i) {
      batch.emplace_back([] {
        for (int k = 0; k < 3; ++k) {
          Spin(std::chrono::microseconds(50));
          std::this_thread::sleep_for(std::chrono::microseconds(500));
        }
      });
    }
    for (std::thread& t : batch) t.join();
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || (argc == 5 && std::strcmp(argv[4], "churn") != 0) ||
      argc > 5) {
    std::fprintf(stderr, "usage: %s COMM WORKERS THREADS [churn]\n", argv[0]);
    return 2;
  }
  prctl(PR_SET_NAME, argv[1]);
  const int workers = std::atoi(argv[2]);
  const int threads = std::atoi(argv[3]);
  int ready[2];
  if (workers < 1 || threads < 1 || pipe(ready) != 0) return 2;
  std::string pids;
  for (int w = 0; w < workers; ++w) {
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      close(ready[0]);
      Worker(threads, ready[1]);
    }
    pids += " " + std::to_string(pid);
  }
  close(ready[1]);
  for (int w = 0; w < workers; ++w) {
    char byte;
    if (read(ready[0], &byte, 1) != 1) return 1;
  }
  std::printf("ready%s\n", pids.c_str());
  std::fflush(stdout);
  if (argc == 5) Churn();
  for (;;) pause();
}
