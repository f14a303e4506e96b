#include "agent/sensors/attach_windows.h"

#include <utility>

#include "agent/sensors/bpf_skeleton.h"

namespace locus {

AttachWindows::AttachWindows(bpf_program* entry, bpf_program* exit,
                             std::chrono::nanoseconds window,
                             std::chrono::nanoseconds period,
                             std::function<void()> before_each)
    : entry_(entry),
      exit_(exit),
      window_(window),
      rest_(period - window),
      before_each_(std::move(before_each)),
      thread_([this] { Run(); }) {}

AttachWindows::~AttachWindows() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void AttachWindows::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    before_each_();
    LinkPtr exit_link(bpf_program__attach(exit_));
    LinkPtr entry_link(bpf_program__attach(entry_));
    if (!exit_link || !entry_link) failures_++;
    cv_.wait_for(lock, window_, [&] { return stop_; });
    entry_link.reset();
    exit_link.reset();
    cv_.wait_for(lock, rest_, [&] { return stop_; });
  }
}

}  // namespace locus
