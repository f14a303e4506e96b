#include "agent/sensors/capabilities.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <initializer_list>

#include "common/os_error.h"

namespace locus {
namespace {

struct Cap {
  int bit;
  const char* name;
};

// CAP_BPF and CAP_PERFMON are 39 and 38; older headers may lack the names.
constexpr Cap kBpf = {39, "CAP_BPF"};
constexpr Cap kPerfmon = {38, "CAP_PERFMON"};
constexpr Cap kSysNice = {CAP_SYS_NICE, "CAP_SYS_NICE"};
constexpr Cap kSysPtrace = {CAP_SYS_PTRACE, "CAP_SYS_PTRACE"};

absl::StatusOr<std::vector<std::string>> Missing(
    std::initializer_list<Cap> needed) {
  // Two 32-bit words per set in the v3 ABI.
  __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3,
                                     .pid = 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capget, &header, data) != 0) return LastErrnoStatus("capget");
  std::vector<std::string> missing;
  for (const Cap& c : needed) {
    uint32_t word = data[c.bit / 32].effective;
    if (!(word & (1u << (c.bit % 32)))) missing.push_back(c.name);
  }
  return missing;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> MissingSensorCapabilities() {
  return Missing({kBpf, kPerfmon});
}

absl::StatusOr<std::vector<std::string>> MissingAgentCapabilities() {
  return Missing({kBpf, kPerfmon, kSysNice, kSysPtrace});
}

}  // namespace locus
