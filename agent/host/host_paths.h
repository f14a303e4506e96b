// Where the host model reads the kernel's view from: "/sys" and "/proc" on a
// host, a fixture tree (tests/fixtures/numaN/{sys,proc}) in tests.
#ifndef LOCUS_AGENT_HOST_HOST_PATHS_H_
#define LOCUS_AGENT_HOST_HOST_PATHS_H_

#include <string>

namespace locus {

struct HostPaths {
  std::string sysfs_root = "/sys";
  std::string procfs_root = "/proc";
};

}  // namespace locus

#endif  // LOCUS_AGENT_HOST_HOST_PATHS_H_
