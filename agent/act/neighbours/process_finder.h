// Finding a neighbour daemon by its name in /proc: irqbalance and numad
// both run as one process named after themselves.
#ifndef LOCUS_AGENT_ACT_NEIGHBOURS_PROCESS_FINDER_H_
#define LOCUS_AGENT_ACT_NEIGHBOURS_PROCESS_FINDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace locus {

// Whether `pid` runs with command name `comm` and is not a zombie (whose
// sockets and queues are gone already).
bool RunsAs(const std::string& procfs_root, int32_t pid,
            absl::string_view comm);

// Every pid that RunsAs `comm`, in /proc's order; an error when /proc
// cannot be listed.
absl::StatusOr<std::vector<int32_t>> FindProcessesNamed(
    const std::string& procfs_root, absl::string_view comm);

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_NEIGHBOURS_PROCESS_FINDER_H_
