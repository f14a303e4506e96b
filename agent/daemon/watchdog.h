// systemd's watchdog (WatchdogSec= in the unit): pinged from a thread of its
// own, and only while the control loop makes progress, so that a stuck loop
// gets the daemon restarted while a tick longer than the ping interval does
// not.
#ifndef LOCUS_AGENT_DAEMON_WATCHDOG_H_
#define LOCUS_AGENT_DAEMON_WATCHDOG_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace locus {

// The interval systemd gave this process (WATCHDOG_USEC, for this pid), or
// nullopt when no watchdog is asked for.
std::optional<absl::Duration> SystemdWatchdogInterval();

// The loop shows progress once per tick, and the watchdog must see it
// within its interval with room to spare: a tick longer than half the
// interval cannot be covered. The error says both numbers and the fixes.
absl::Status CheckTickCovered(absl::Duration tick, absl::Duration interval);

// Whether the loop is alive, from its count of ticks begun, checked now and
// then: alive while the count changed within `stall_limit`. Pure, for tests.
class ProgressCheck {
 public:
  ProgressCheck(absl::Duration stall_limit, absl::Time start)
      : stall_limit_(stall_limit), last_change_(start) {}
  bool Alive(uint64_t ticks, absl::Time now);

 private:
  const absl::Duration stall_limit_;
  uint64_t last_ticks_ = 0;
  absl::Time last_change_;
};

class Watchdog {
 public:
  // `ticks` reads the loop's count (any thread); `ping` tells systemd the
  // daemon is alive. Pings every interval/4 while the loop made progress
  // within the interval.
  Watchdog(absl::Duration interval, std::function<uint64_t()> ticks,
           std::function<void()> ping);
  ~Watchdog();  // Stop()
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void Start();
  void Stop();

 private:
  void Run();

  const absl::Duration interval_;
  const std::function<uint64_t()> ticks_;
  const std::function<void()> ping_;
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_DAEMON_WATCHDOG_H_
