#include "agent/sensors/capabilities.h"

#include <linux/capability.h>

#include <initializer_list>

#include "common/capabilities.h"

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
  absl::StatusOr<uint64_t> effective = EffectiveCapabilities();
  if (!effective.ok()) return effective.status();
  std::vector<std::string> missing;
  for (const Cap& c : needed) {
    if (!HasCapability(*effective, c.bit)) missing.push_back(c.name);
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
