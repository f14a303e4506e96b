// irqbalance's control socket protocol (1.9.2, irqbalance.c sock_handle):
// one request per connection, one recvmsg of at most 500 bytes on the
// server's side, then an answer (or none) and the close. Pure text
// functions here; the socket is irqbalance_socket.h's.
//
//   "setup"                   -> "SLEEP 10 IRQ 38 LOAD 0 DIFF 0 CLASS 0 ...
//                                 BANNED 00000000": the sleep interval, the
//                                 banned IRQ list (cl_banned_irqs: --banirq
//                                 ones and those set through the socket) and
//                                 the banned CPU mask
//   "settings ban irqs 38 40" -> no answer; REPLACES the whole banned IRQ
//                                 list ("NONE" empties it)
#ifndef LOCUS_AGENT_ACT_NEIGHBOURS_IRQBALANCE_PROTOCOL_H_
#define LOCUS_AGENT_ACT_NEIGHBOURS_IRQBALANCE_PROTOCOL_H_

#include <cstddef>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace locus {

inline constexpr absl::string_view kIrqbalanceSetupCommand = "setup";

// The longest command irqbalance reads whole: its one recvmsg takes 500
// bytes and leaves the rest unread, so a longer list would be cut in the
// middle of a number and the tail of the list silently dropped.
inline constexpr size_t kMaxIrqbalanceCommandBytes = 499;

struct IrqbalanceSetup {
  int sleep_seconds = 0;
  std::set<int> banned_irqs;
  std::string banned_cpus;  // the hex mask as irqbalance prints it
};

// A reply to "setup". InvalidArgument saying what was wrong (and quoting the
// reply, escaped) for anything but the format above, an empty reply
// included: irqbalance closes without answering a sender that is not root.
absl::StatusOr<IrqbalanceSetup> ParseIrqbalanceSetup(absl::string_view reply);

// "settings ban irqs ..." making `irqs` the whole banned list ("NONE" for
// none). InvalidArgument for an IRQ of 0 or less: 1.9.2 reads the numbers
// with strtoul until one is 0, so a 0 would end the list there.
// OutOfRange when the command would not fit in kMaxIrqbalanceCommandBytes:
// never cut, since the IRQs cut off would be unbanned.
absl::StatusOr<std::string> FormatBanIrqs(const std::set<int>& irqs);

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_NEIGHBOURS_IRQBALANCE_PROTOCOL_H_
