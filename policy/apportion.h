// Largest-remainder apportionment: how the policy shares workers among nodes
// by usable CPUs, and a NIC's queues among nodes by their consumers.
#ifndef LOCUS_POLICY_APPORTION_H_
#define LOCUS_POLICY_APPORTION_H_

#include <vector>

namespace locus {

// Splits `total` items over `weights` by largest remainder. Equal remainders
// go to the index with the larger `prefer` (when given: how many items would
// rather be there, so an even split moves nothing it need not), then to the
// lower index, so the split is deterministic.
std::vector<int> Apportion(int total, const std::vector<double>& weights,
                           const std::vector<int>& prefer = {});

}  // namespace locus

#endif  // LOCUS_POLICY_APPORTION_H_
