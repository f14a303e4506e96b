#include "agent/bpf/capabilities.h"

#include <errno.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace locus {

absl::StatusOr<std::vector<std::string>> MissingSensorCapabilities() {
  // capget directly: two 32-bit words per set in the v3 ABI, no libcap.
  __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3,
                                     .pid = 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capget, &header, data) != 0) {
    return absl::InternalError(absl::StrCat("capget: ", strerror(errno)));
  }
  struct Cap {
    int bit;
    const char* name;
  };
  // CAP_BPF and CAP_PERFMON are 39 and 38; older headers may lack the names.
  constexpr Cap kNeeded[] = {
      {39, "CAP_BPF"}, {38, "CAP_PERFMON"}, {CAP_SYS_ADMIN, "CAP_SYS_ADMIN"}};
  std::vector<std::string> missing;
  for (const Cap& c : kNeeded) {
    uint32_t word = data[c.bit / 32].effective;
    if (!(word & (1u << (c.bit % 32)))) missing.push_back(c.name);
  }
  return missing;
}

}  // namespace locus
