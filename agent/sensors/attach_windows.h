// A pair of BPF programs attached only in windows: for `window` in every
// `period`, on a thread of its own, so that hooks too busy to keep attached
// cost a share of what they would.
#ifndef LOCUS_AGENT_SENSORS_ATTACH_WINDOWS_H_
#define LOCUS_AGENT_SENSORS_ATTACH_WINDOWS_H_

#include <bpf/libbpf.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace locus {

class AttachWindows {
 public:
  // Starts at once. `exit` is attached before `entry` and detached after
  // it, so no entry is seen without its exit. `before_each` runs before
  // every window, the programs detached.
  AttachWindows(bpf_program* entry, bpf_program* exit,
                std::chrono::nanoseconds window,
                std::chrono::nanoseconds period,
                std::function<void()> before_each);
  // Stops the thread, the programs detached.
  ~AttachWindows();
  AttachWindows(const AttachWindows&) = delete;
  AttachWindows& operator=(const AttachWindows&) = delete;

  // Windows in which the programs could not be attached.
  uint64_t failures() const { return failures_; }

 private:
  void Run();

  bpf_program* entry_;
  bpf_program* exit_;
  std::chrono::nanoseconds window_;
  std::chrono::nanoseconds rest_;
  std::function<void()> before_each_;
  std::atomic<uint64_t> failures_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;   // guarded by mu_
  std::thread thread_;  // last: started once the rest is set
};

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_ATTACH_WINDOWS_H_
