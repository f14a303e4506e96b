#include "agent/act/neighbours/host_tuners.h"

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "agent/act/neighbours/process_finder.h"
#include "agent/host/file_util.h"
#include "common/printable.h"

namespace locus {

std::string TunedSentence(absl::string_view profile) {
  return absl::StrCat(
      profile.empty()
          ? std::string("an unknown profile")
          : absl::StrCat("profile '", Printable(profile, kMaxTunedProfileBytes),
                         "'"),
      ": a profile may set kernel.numa_balancing or restart irqbalance "
      "through its irqbalance plugin, after which Locus bans its IRQs again");
}

void HostTuners::Tick(absl::Time now, std::optional<int> numa_balancing) {
  if (numa_balancing.has_value()) state_.numa_balancing = *numa_balancing;
  if (now - last_look_ < kHostTunersLookInterval) return;
  last_look_ = now;
  absl::StatusOr<std::vector<int32_t>> tuned =
      FindProcessesNamed(paths_.procfs_root, "tuned");
  state_.tuned_pid = tuned.ok() && !tuned->empty() ? tuned->front() : 0;
  state_.tuned_profile.clear();
  if (state_.tuned_pid != 0) {
    state_.tuned_profile = ReadFirstLine(paths_.tuned_profile).value_or("");
  }
}

std::string HostTuners::AutonumaNote() const {
  switch (state_.numa_balancing) {
    case -1:
      return "kernel.numa_balancing unreadable";
    case 0:
      return "off (kernel.numa_balancing=0): only Locus's page mover moves "
             "the workers' memory";
    case 2:
      // NUMA_BALANCING_MEMORY_TIERING alone: the kernel scans only the
      // pages on a lower memory tier and promotes the hot ones.
      return "memory tiering only (kernel.numa_balancing=2): it promotes "
             "hot pages from lower memory tiers, which Locus leaves to it, "
             "and moves no page between the nodes with CPUs";
    default:
      return absl::StrCat(
          "on (kernel.numa_balancing=", state_.numa_balancing,
          "): it moves pages toward the threads that touch them, so the "
          "memory of the workers Locus pins follows them home");
  }
}

std::string HostTuners::TunedNote() const {
  if (state_.tuned_pid == 0) return "not running";
  return TunedSentence(state_.tuned_profile);
}

}  // namespace locus
