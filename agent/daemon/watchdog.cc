#include "agent/daemon/watchdog.h"

#include <systemd/sd-daemon.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace locus {

std::optional<absl::Duration> SystemdWatchdogInterval() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return std::nullopt;
  return absl::Microseconds(static_cast<int64_t>(usec));
}

absl::Status CheckTickCovered(absl::Duration tick, absl::Duration interval) {
  if (tick * 2 <= interval) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "--tick=", absl::FormatDuration(tick),
      " is too long for the systemd watchdog (WatchdogSec=",
      absl::FormatDuration(interval),
      "): the watchdog is pinged only while ticks keep coming, so a tick "
      "must be at most half the watchdog interval (",
      absl::FormatDuration(interval / 2),
      "); shorten --tick or raise WatchdogSec= (systemctl edit locusd)"));
}

bool ProgressCheck::Alive(uint64_t ticks, absl::Time now) {
  if (ticks != last_ticks_) {
    last_ticks_ = ticks;
    last_change_ = now;
  }
  return now - last_change_ <= stall_limit_;
}

Watchdog::Watchdog(absl::Duration interval, std::function<uint64_t()> ticks,
                   std::function<void()> ping)
    : interval_(interval), ticks_(std::move(ticks)), ping_(std::move(ping)) {}

Watchdog::~Watchdog() { Stop(); }

void Watchdog::Start() {
  thread_ = std::thread([this] { Run(); });
}

void Watchdog::Stop() {
  if (!thread_.joinable()) return;
  stop_.Notify();
  thread_.join();
}

// With ticks at most interval/2 apart and checks every interval/4, a
// healthy loop is seen to move at least every 3/4 interval; one that has
// not moved for a whole interval is stuck, and systemd restarts the daemon
// an interval after the last ping.
void Watchdog::Run() {
  ProgressCheck check(interval_, absl::Now());
  bool stalled = false;
  do {
    if (check.Alive(ticks_(), absl::Now())) {
      if (stalled) LogInfo("the control loop moves again");
      stalled = false;
      ping_();
    } else if (!stalled) {
      stalled = true;
      LogError("the control loop made no progress for ",
               absl::FormatDuration(interval_),
               " → no longer pinging the systemd watchdog");
    }
  } while (!stop_.WaitForNotificationWithTimeout(interval_ / 4));
}

}  // namespace locus
