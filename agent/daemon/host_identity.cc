#include "agent/daemon/host_identity.h"

#include <limits.h>
#include <unistd.h>

#include "absl/status/statusor.h"
#include "agent/host/file_util.h"
#include "common/log.h"
#include "common/os_error.h"

namespace locus {

HostIdentity ReadHostIdentity(const std::string& procfs_root) {
  HostIdentity identity;
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) == 0) {
    identity.hostname = name;
  } else {
    LogWarning(ErrnoMessage("gethostname", errno));
  }
  std::string path = procfs_root + "/sys/kernel/random/boot_id";
  absl::StatusOr<std::string> boot_id = ReadFirstLine(path);
  if (boot_id.ok()) {
    identity.boot_id = *boot_id;
  } else {
    LogWarning("boot id: ", boot_id.status().message());
  }
  return identity;
}

}  // namespace locus
