// The factory of the accept owners sensor (accept_owners.h) over
// bpf/accepts.bpf.c. Its own library (locus_sensors_accepts_bpf), so that
// only it links libbpf and the skeleton. Needs CAP_BPF and CAP_PERFMON (or
// CAP_SYS_ADMIN).
#ifndef LOCUS_AGENT_SENSORS_ACCEPT_OWNERS_BPF_H_
#define LOCUS_AGENT_SENSORS_ACCEPT_OWNERS_BPF_H_

#include <memory>

#include "agent/sensors/accept_owners.h"

namespace locus {

// source() of the BPF sensor.
inline constexpr char kAcceptOwnersSourceBpf[] =
    "bpf: accept calls per listening socket";

// The BPF sensor when its program loads and attaches here (checked once,
// now, and undone at once: it is loaded and attached for real at the first
// non-empty Watch and detached at an empty one). Otherwise, or with
// `disable_bpf`, one that learns nothing: its Watch of a non-empty set fails
// with FailedPrecondition saying why ("bpf disabled", "bpf unavailable:
// ..."), as its source() does.
std::unique_ptr<AcceptOwners> MakeAcceptOwners(bool disable_bpf);

}  // namespace locus

#endif  // LOCUS_AGENT_SENSORS_ACCEPT_OWNERS_BPF_H_
