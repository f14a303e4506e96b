// The real IrqbalanceOps: irqbalance found in /proc by its name, spoken to
// through its root-only control socket (irqbalance_protocol.h).
//
// Where it listens (1.9.2, init_socket): /run/irqbalance/irqbalance<PID>.sock,
// or, when that bind fails (no /run/irqbalance: started outside its systemd
// unit, which creates it), the abstract socket named by all zero bytes.
// Anyone could bind either before irqbalance does, and irqbalance believes
// whatever credentials it is sent, so Locus checks both ends: the file must
// be a socket owned by root in a directory only root can write, and the
// peer (SO_PEERCRED) must be that irqbalance's pid running as root, or
// nothing is sent.
//
// Every socket is non-blocking: a connect to a full queue fails at once
// (irqbalance accepts only between scans), a send of under 500 bytes fits
// in an empty socket buffer, and the answer is polled.
#ifndef LOCUS_AGENT_ACT_NEIGHBOURS_IRQBALANCE_SOCKET_H_
#define LOCUS_AGENT_ACT_NEIGHBOURS_IRQBALANCE_SOCKET_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "agent/act/neighbours/irqbalance_ops.h"

namespace locus {

// Find() first checks the last irqbalance it found (its /proc/PID/stat,
// status and exe) and scans /proc only when that one is gone; while one
// runs, a second started beside it is not noticed. Only an irqbalance run
// by root counts (process_finder.h): two found by a scan is an error (Locus
// cannot tell which one moves the IRQs); a look-alike is only listed.
std::unique_ptr<IrqbalanceOps> MakeIrqbalanceSocketOps(
    std::string procfs_root = "/proc", std::string run_dir = "/run/irqbalance");

// One request, waited for: for exit and restore, where blocking is fine.
// Polls every 20 ms; DeadlineExceeded after `timeout` (the request is then
// dropped, closing the connection).
absl::StatusOr<std::string> IrqbalanceRequestBlocking(
    IrqbalanceOps& ops, const IrqbalanceInstance& instance,
    absl::string_view command, absl::Duration timeout);

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_NEIGHBOURS_IRQBALANCE_SOCKET_H_
