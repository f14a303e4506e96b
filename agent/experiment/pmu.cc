#include "agent/experiment/pmu.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/unique_fd.h"

namespace locus {

std::string PmuAvailability() {
  perf_event_attr attr;
  memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  attr.disabled = 1;
  attr.exclude_kernel = 0;
  UniqueFd fd(static_cast<int>(
      syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC)));
  if (!fd) {
    return absl::StrCat("none (perf_event_open cycles: ", strerror(errno),
                        "): IPC and cache misses per KiB not measured");
  }
  return "present, not read: this version compares work per CPU-second only "
         "(IPC and cache misses per KiB are not collected yet)";
}

}  // namespace locus
