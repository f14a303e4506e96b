// The real NumadOps: numad found through its pid file (root's alone) or
// /proc (a root process named numad running a root binary, as
// process_finder.h identifies it; a user's look-alike is only listed),
// spoken to through the message queue it creates at key 0xdeadbeef, as
// `numad -x PID` does: a message whose type is numad's pid, carrying the
// command and the pid.
//
// The queue is created by whoever calls msgget first, and numad does not
// check: Locus sends only to a queue created and owned by root that no one
// else may write (numad makes it 0660), so a user cannot read Locus's
// commands or stand in for numad.
#ifndef LOCUS_AGENT_ACT_NEIGHBOURS_NUMAD_QUEUE_H_
#define LOCUS_AGENT_ACT_NEIGHBOURS_NUMAD_QUEUE_H_

#include <memory>
#include <string>

#include "agent/act/neighbours/numad_ops.h"

namespace locus {

// numad's queue key (numad.c, init_msg_queue).
inline constexpr int kNumadQueueKey = static_cast<int>(0xdeadbeef);

std::unique_ptr<NumadOps> MakeNumadQueueOps(
    std::string procfs_root = "/proc", std::string pid_file = "/run/numad.pid");

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_NEIGHBOURS_NUMAD_QUEUE_H_
