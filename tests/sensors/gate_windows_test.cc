#include "agent/sensors/gate_windows.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "gtest/gtest.h"

namespace locus {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;

// What the gate was set to, in order.
class Recorder {
 public:
  std::function<void(bool)> Setter() {
    return [this](bool open) {
      std::lock_guard<std::mutex> lock(mu_);
      calls_.push_back(open);
      cv_.notify_all();
    };
  }
  void WaitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return calls_.size() >= n; });
  }
  std::vector<bool> calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<bool> calls_;
};

// The gate opens first, then alternates, and is left closed: the programs
// it guards never trace after the windows stop.
TEST(GateWindows, AlternatesFromOpenAndEndsClosed) {
  Recorder rec;
  {
    GateWindows w(milliseconds(1), milliseconds(3), rec.Setter());
    rec.WaitFor(6);  // three windows
  }
  std::vector<bool> calls = rec.calls();
  ASSERT_GE(calls.size(), 6u);
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i], i % 2 == 0) << "call " << i;
  }
  EXPECT_FALSE(calls.back());
}

// Stopped during a window, the gate closes at once rather than after the
// rest of the period.
TEST(GateWindows, StoppedInAWindowCloses) {
  Recorder rec;
  {
    GateWindows w(hours(1), hours(2), rec.Setter());
    rec.WaitFor(1);
  }
  EXPECT_EQ(rec.calls(), (std::vector<bool>{true, false}));
}

}  // namespace
}  // namespace locus
