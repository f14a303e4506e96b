// lab_memhog's command line, parsed into a value so that usage errors are
// testable without running the worker.
#ifndef LOCUS_TESTS_LAB_MEMHOG_ARGS_H_
#define LOCUS_TESTS_LAB_MEMHOG_ARGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace locus {

struct MemhogOptions {
  uint64_t mb = 0;      // --mb: memory to first-touch, MiB (required)
  int touch_node = -1;  // --touch_node: node whose CPUs first-touch it
  int run_node = -1;    // --run_node: node whose CPUs then use it
  // --bind_node: node the first touch's memory is bound to (MPOL_BIND, reset
  // to the default after the touch), which may be a node without CPUs;
  // -1: touch_node.
  int bind_node = -1;
  // --hot_mb: MiB at the buffer's start that the work passes use, the rest
  // left cold once touched; -1: all of it. 0 leaves the process idle.
  int64_t hot_mb = -1;
  int report_ms = 200;  // --report_ms: progress line period; 0: none
  // --thp: the buffer 2 MiB-aligned and madvise(MADV_HUGEPAGE) before the
  // first touch, so that the kernel backs it with transparent huge pages
  // under THP "madvise" as well as "always".
  bool thp = false;
  // --wait_for: after the touch, print "touched" and wait until this file
  // exists before moving to run_node and taking the name lab_memhog, so
  // that several workers become targets at the same moment.
  std::string wait_for;
};

// `args` excludes argv[0]. Flags are --name=value; INVALID_ARGUMENT names
// the offending flag.
absl::StatusOr<MemhogOptions> ParseMemhogArgs(
    const std::vector<std::string>& args);

extern const char kMemhogUsage[];

// Bytes of AnonHugePages that /proc/PID/smaps text `smaps` gives the
// mappings overlapping [start, end). INVALID_ARGUMENT, naming the line, when
// an overlapping mapping's AnonHugePages line does not parse.
absl::StatusOr<uint64_t> AnonHugeBytes(absl::string_view smaps, uint64_t start,
                                       uint64_t end);

}  // namespace locus

#endif  // LOCUS_TESTS_LAB_MEMHOG_ARGS_H_
