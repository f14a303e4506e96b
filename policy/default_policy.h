// The built-in policy: what locusd runs when /etc/locus/policy.yaml is absent,
// and the base every policy file is read on top of. deploy/policy/nginx.yaml
// spells out the same values with comments (a test keeps the two equal).
#ifndef LOCUS_POLICY_DEFAULT_POLICY_H_
#define LOCUS_POLICY_DEFAULT_POLICY_H_

#include "locus/v1/policy.pb.h"

namespace locus {

// nginx on a typical web host: workers spread over nodes in proportion to
// their CPUs and pinned to their home node, memory and NIC IRQs following
// them, moves only for a gain of 10% or more, 30 s dwell, 8 moves per tick,
// 256 MiB/s of page migration.
v1::Policy DefaultPolicy();

}  // namespace locus

#endif  // LOCUS_POLICY_DEFAULT_POLICY_H_
