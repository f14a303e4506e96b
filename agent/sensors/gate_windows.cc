#include "agent/sensors/gate_windows.h"

#include <utility>

namespace locus {

GateWindows::GateWindows(std::chrono::nanoseconds window,
                         std::chrono::nanoseconds period,
                         std::function<void(bool open)> set_open)
    : window_(window),
      rest_(period - window),
      set_open_(std::move(set_open)),
      thread_([this] { Run(); }) {}

GateWindows::~GateWindows() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void GateWindows::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    set_open_(true);
    cv_.wait_for(lock, window_, [&] { return stop_; });
    set_open_(false);
    cv_.wait_for(lock, rest_, [&] { return stop_; });
  }
}

}  // namespace locus
