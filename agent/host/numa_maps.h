// Resident pages per NUMA node of a process, from /proc/PID/numa_maps: one
// read of a text file per tick, no page walk of our own (the kernel walks
// the page tables while generating it: about 8 ms for 200 MiB resident on
// the lab VM, cost_test; an nginx worker of tens of MB is ~1 ms).
#ifndef LOCUS_AGENT_HOST_NUMA_MAPS_H_
#define LOCUS_AGENT_HOST_NUMA_MAPS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policy/snapshot.h"

namespace locus {

// Sums the "N<node>=<pages>" fields of every mapping, in units of
// `page_size` (a 2 MiB huge page counts as 512 pages of 4 KiB), indexed like
// topology.nodes. Pages on a node the topology does not know are an error.
absl::StatusOr<std::vector<uint64_t>> ParseNumaMaps(absl::string_view text,
                                                    const Topology& topology,
                                                    uint64_t page_size);

}  // namespace locus

#endif  // LOCUS_AGENT_HOST_NUMA_MAPS_H_
