#include "agent/daemon/check_policy.h"

#include <iostream>

#include "agent/host/topology.h"
#include "policy/policy_yaml.h"

namespace locus {

int RunCheckPolicy(const std::string& path, const std::string& sysfs_root) {
  // CPU lists in the file must name CPUs of this host, when it can be read.
  absl::StatusOr<Topology> host = ReadTopology(sysfs_root);
  absl::StatusOr<v1::Policy> policy =
      LoadPolicyFile(path, host.ok() ? &*host : nullptr);
  if (!policy.ok()) {
    std::cerr << policy.status().message() << "\n";
    return 1;
  }
  std::cout << path << ": ok\n";
  return 0;
}

}  // namespace locus
