// A stand-in target for the agent footprint benchmark: a process named by
// argv[1] (its comm, as a policy selects it) with argv[2] threads that mostly
// sleep and now and then spin briefly, so they show up as live, scheduled
// threads without loading the machine.
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s COMM THREADS\n", argv[0]);
    return 2;
  }
  prctl(PR_SET_NAME, argv[1]);
  int n = std::atoi(argv[2]);
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([i] {
      std::atomic<unsigned> sink{0};
      for (;;) {
        for (unsigned k = 0; k < 2000; ++k) sink.fetch_add(k);
        std::this_thread::sleep_for(std::chrono::milliseconds(1000 + i % 200));
      }
    });
  }
  std::printf("ready %d\n", n);
  std::fflush(stdout);
  pause();
}
