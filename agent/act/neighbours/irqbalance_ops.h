// The calls Locus makes to irqbalance, behind small interfaces so that the
// reconciler (irqbalance_bans.h) is tested without root through a scripted
// irqbalance (tests/act/neighbours/fake_irqbalance.h). The real ones talk to
// its control socket (irqbalance_socket.h).
//
// Why a request is an object that is polled: irqbalance answers from its
// single-threaded main loop, which 1.9.2 holds for its whole sleep interval
// (10 s) during the rescan that follows every change of its ban list, so an
// answer may come ticks later and the control loop must not wait for it.
#ifndef LOCUS_AGENT_ACT_NEIGHBOURS_IRQBALANCE_OPS_H_
#define LOCUS_AGENT_ACT_NEIGHBOURS_IRQBALANCE_OPS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace locus {

// The socket string of irqbalance's abstract socket (the fallback it binds
// when /run/irqbalance is missing: a name of all zero bytes).
inline constexpr absl::string_view kIrqbalanceAbstractSocket = "@";

// How messages name one irqbalance: "irqbalance (pid N)".
inline std::string IrqbalanceName(int32_t pid) {
  return absl::StrCat("irqbalance (pid ", pid, ")");
}

struct IrqbalanceInstance {
  int32_t pid = 0;
  std::string socket;  // a path, or kIrqbalanceAbstractSocket
  // Its sleep interval as its command line set it (irqbalance_args.h), 0
  // when unknown: what a rescan may hold it for before it first answers.
  // A client may change it since ("settings sleep"): "setup" says the
  // one in force.
  int sleep_seconds = 0;
  bool operator==(const IrqbalanceInstance&) const = default;
};

// One command sent, its answer awaited.
class IrqbalanceRequest {
 public:
  virtual ~IrqbalanceRequest() = default;
  // Never blocks: nullopt while irqbalance has not answered and closed; the
  // reply (maybe empty) once it closed; an error on failure. Dropping the
  // request closes the connection.
  virtual absl::StatusOr<std::optional<std::string>> Poll() = 0;
};

class IrqbalanceOps {
 public:
  virtual ~IrqbalanceOps() = default;
  // The running irqbalance and its socket; nullopt when none runs; an error
  // when one runs but has no socket Locus can use (the text says why and
  // what to do).
  virtual absl::StatusOr<std::optional<IrqbalanceInstance>> Find() = 0;
  // The processes named irqbalance the last scan of Find refused, one
  // printable sentence each (process_finder.h): none is counted or spoken
  // to, whether or not the real one runs.
  virtual std::vector<std::string> LookAlikes() const { return {}; }
  // Starts one request (connect, send with credentials); never blocks.
  // InvalidArgument for an empty command or one over
  // kMaxIrqbalanceCommandBytes (irqbalance_protocol.h), before connecting.
  virtual absl::StatusOr<std::unique_ptr<IrqbalanceRequest>> Start(
      const IrqbalanceInstance& instance, absl::string_view command) = 0;
};

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_NEIGHBOURS_IRQBALANCE_OPS_H_
