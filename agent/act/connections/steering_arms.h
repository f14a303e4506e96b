// An experiment's arms in connection steering (bpf/include/locus/
// reuseport.h): which slots of a group's socket array are the control
// arm's, the share of new connections they take, and the treated sockets
// among which the rest is spread when it is not steered by node.
#ifndef LOCUS_AGENT_ACT_CONNECTIONS_STEERING_ARMS_H_
#define LOCUS_AGENT_ACT_CONNECTIONS_STEERING_ARMS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "agent/act/connections/connection_steering.h"
#include "agent/act/connections/reuseport_ops.h"

namespace locus {

// The rows for `steering` given each socket's slot; empty without control
// sockets (or when none of them has a slot). The control arm's share is its
// sockets' share of all the group's steered sockets, C/(C+T), so each worker
// gets about 1/N of the new connections whichever arm it is in. What the
// rows cannot hold is left out, a socket with no slot too; both are said in
// `problem`.
ReuseportArms ArmsOf(const GroupSteering& steering,
                     const std::map<uint64_t, uint32_t>& slot_of,
                     const ReuseportLimits& limits, std::string* problem);

// Refuses a plan that lists a socket in the control arm and on a node: it
// would take both arms' connections.
absl::Status ValidateArms(const GroupSteering& steering);

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_CONNECTIONS_STEERING_ARMS_H_
