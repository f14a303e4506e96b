// locus_bench_empty: attaches the empty baseline programs and holds them
// until SIGINT/SIGTERM. Used by sensor_overhead.sh; not a test.
#include <signal.h>
#include <unistd.h>

#include <iostream>

#include "agent/sensors/baseline_programs.h"

int main() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  auto programs = locus::LoadBaselinePrograms();
  if (!programs.ok()) {
    std::cerr << "locus_bench_empty: " << programs.status().message() << "\n";
    return 1;
  }
  std::cout << "attached" << std::endl;
  int sig = 0;
  sigwait(&set, &sig);
  return 0;
}
