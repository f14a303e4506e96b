// Opens a gate for `window` in every `period`, on a thread of its own: BPF
// programs too busy to run all the time stay attached and do their work
// only while their gate (a flag they read first) is open. Attaching and
// detaching instead would patch kernel text at every window (a tracepoint's
// first program enables it, its last disables it), and each patch
// interrupts every CPU.
#ifndef LOCUS_AGENT_SENSORS_GATE_WINDOWS_H_
#define LOCUS_AGENT_SENSORS_GATE_WINDOWS_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace locus {

class GateWindows {
 public:
  // Starts at once with an open window. `set_open(true)` opens the gate,
  // `set_open(false)` closes it; they alternate, starting with open.
  GateWindows(std::chrono::nanoseconds window, std::chrono::nanoseconds period,
              std::function<void(bool open)> set_open);
  // Stops the thread, the gate closed.
  ~GateWindows();
  GateWindows(const GateWindows&) = delete;
  GateWindows& operator=(const GateWindows&) = delete;

 private:
  void Run();

  std::chrono::nanoseconds window_;
  std::chrono::nanoseconds rest_;
  std::function<void(bool)> set_open_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;   // guarded by mu_
  std::thread thread_;  // last: started once the rest is set
};

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_GATE_WINDOWS_H_
