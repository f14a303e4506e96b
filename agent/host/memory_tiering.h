// The kernel's movers of pages between memory tiers and what they moved,
// read each tick into Snapshot::tiering: reclaim's demotion switch, the
// DAMON schemes that migrate pages, and /proc/vmstat's promotion and
// demotion counters.
#ifndef LOCUS_AGENT_HOST_MEMORY_TIERING_H_
#define LOCUS_AGENT_HOST_MEMORY_TIERING_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policy/snapshot.h"

namespace locus {

// Reads <sysfs_root>/kernel/mm/numa/demotion_enabled ("true"/"false"), the
// schemes of every running kdamond under <sysfs_root>/kernel/mm/damon/admin
// whose action is migrate_hot or migrate_cold (with their target_nid), and
// pgpromote_success and pgdemote_{kswapd,direct,khugepaged} from
// <procfs_root>/vmstat.
//
// What a kernel does not have (no demotion switch, no DAMON, no such
// counter) is -1 or empty, silently: most hosts have no tiers. What is
// there but unreadable or malformed is reported in `errors` as
// "<path>: <why>" and left unknown, so the agent keeps running. Fails only
// when `sysfs_root` or `procfs_root` is not a directory at all (a wrong
// --sysfs_root or --procfs_root), which no fallback should hide.
absl::StatusOr<MemoryTiering> ReadMemoryTiering(
    absl::string_view sysfs_root, absl::string_view procfs_root,
    std::vector<std::string>* errors);

}  // namespace locus

#endif  // LOCUS_AGENT_HOST_MEMORY_TIERING_H_
