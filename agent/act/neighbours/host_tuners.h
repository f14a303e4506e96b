// The tuners Locus tells nothing, watched for status: the kernel's NUMA
// balancing (AutoNUMA), which moves pages toward the threads that touch
// them and so takes the workers' memory home once Locus pins them, and
// tuned, whose profiles may set kernel.numa_balancing or restart irqbalance
// through their irqbalance plugin (Locus then bans again).
#ifndef LOCUS_AGENT_ACT_NEIGHBOURS_HOST_TUNERS_H_
#define LOCUS_AGENT_ACT_NEIGHBOURS_HOST_TUNERS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace locus {

// How often /proc is read for them: a /proc scan finds tuned.
inline constexpr absl::Duration kHostTunersLookInterval = absl::Seconds(10);

// A tuned profile's name is the first line of a file: quoted escaped and cut
// here (names are short; the file is anyone's with root to write).
inline constexpr size_t kMaxTunedProfileBytes = 64;

// What a running tuned may do to Locus, one sentence for status and the
// doctor: "profile 'NAME': a profile may set ...". `profile` empty: unknown.
std::string TunedSentence(absl::string_view profile);

struct HostTunerPaths {
  std::string procfs_root = "/proc";
  std::string tuned_profile = "/etc/tuned/active_profile";
};

struct HostTunersState {
  int numa_balancing = -1;    // kernel.numa_balancing; -1: unreadable
  int32_t tuned_pid = 0;      // 0: tuned does not run
  std::string tuned_profile;  // its active profile, when readable
};

class HostTuners {
 public:
  explicit HostTuners(HostTunerPaths paths) : paths_(std::move(paths)) {}

  // Once per tick. `numa_balancing` is kernel.numa_balancing as this tick's
  // snapshot read it (nullopt: no snapshot this tick, the last value
  // stays); tuned is looked for every kHostTunersLookInterval.
  void Tick(absl::Time now, std::optional<int> numa_balancing);

  const HostTunersState& state() const { return state_; }
  // What each does to Locus here, one sentence for status.
  std::string AutonumaNote() const;
  std::string TunedNote() const;

 private:
  HostTunerPaths paths_;
  HostTunersState state_;
  absl::Time last_look_ = absl::InfinitePast();
};

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_NEIGHBOURS_HOST_TUNERS_H_
