// This process's effective capability set, read with capget(2) (no libcap):
// what the sensors' and the agent's checks, and the page lookup's choice of
// walk, are decided on.
#ifndef LOCUS_COMMON_CAPABILITIES_H_
#define LOCUS_COMMON_CAPABILITIES_H_

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "common/os_error.h"

namespace locus {

// Bit N is capability N.
inline absl::StatusOr<uint64_t> EffectiveCapabilities() {
  // Two 32-bit words per set in the v3 ABI.
  __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3,
                                     .pid = 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capget, &header, data) != 0) return LastErrnoStatus("capget");
  return uint64_t{data[0].effective} | uint64_t{data[1].effective} << 32;
}

inline bool HasCapability(uint64_t effective, int bit) {
  return ((effective >> bit) & 1) != 0;
}

}  // namespace locus

#endif  // LOCUS_COMMON_CAPABILITIES_H_
