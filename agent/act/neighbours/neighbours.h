// The neighbours together, as the executor drives them each tick: which
// IRQs irqbalance must leave to Locus (those journaled as Locus's and those
// the plan is about to move) and which workers numad must leave alone
// (those whose threads Locus pinned), per the policy's coexist modes.
#ifndef LOCUS_AGENT_ACT_NEIGHBOURS_NEIGHBOURS_H_
#define LOCUS_AGENT_ACT_NEIGHBOURS_NEIGHBOURS_H_

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/time/time.h"
#include "agent/act/neighbours/host_tuners.h"
#include "agent/act/neighbours/irqbalance_bans.h"
#include "agent/act/neighbours/irqbalance_ops.h"
#include "agent/act/neighbours/numad_exclusions.h"
#include "agent/act/neighbours/numad_ops.h"
#include "agent/journal/journal.h"

namespace locus {

// How long an IRQ the plan asked to move stays banned without being asked
// again or moved (then journaled, and banned while the journal holds it).
inline constexpr absl::Duration kAskedIrqHold = absl::Seconds(30);

// The policy's coexist section, as the actuators see it.
struct CoexistModes {
  bool irqbalance_ban = true;
  bool numad_exclude = true;
};

struct NeighbourOps {
  std::unique_ptr<IrqbalanceOps> irqbalance;
  std::unique_ptr<NumadOps> numad;
  HostTunerPaths tuners;
};

// The real ones: irqbalance's socket in /run/irqbalance, numad's queue;
// AutoNUMA and tuned under `procfs_root`.
NeighbourOps MakeNeighbourOps(const std::string& procfs_root);

// What a restore needs to give back journaled bans and exclusions; null
// members are made for the running host (agent/act/restore.h).
struct NeighbourRestoreOps {
  IrqbalanceOps* irqbalance = nullptr;
  NumadOps* numad = nullptr;
  // irqbalance 1.9 answers only between its scans: a rescan holds it for
  // its sleep interval (10 s by default), and the list is read, sent and
  // read back, the last maybe across the rescan that the send started.
  absl::Duration timeout = absl::Seconds(25);
};

class Neighbours {
 public:
  Neighbours(NeighbourOps ops, Journal* journal);

  // Whether Locus may move `irq` now: nullopt to go ahead; otherwise why
  // it waits (irqbalance runs and has not banned it yet), and the IRQ is
  // asked for at the next Tick.
  std::optional<std::string> WaitFor(int irq);

  // Once per tick, never blocks. `numa_balancing`: kernel.numa_balancing as
  // this tick's snapshot read it (nullopt: no snapshot).
  void Tick(const CoexistModes& modes, std::optional<int> numa_balancing,
            absl::Time now);

  // Before exit: lets irqbalance answer what it was asked (up to
  // `timeout`), which it cannot survive answering to a closed connection.
  void Finish(absl::Duration timeout) { bans_.Finish(timeout); }

  const CoexistModes& modes() const { return modes_; }
  const IrqbalanceState& irqbalance() const { return bans_.state(); }
  const NumadState& numad() const { return exclusions_.state(); }
  const HostTuners& tuners() const { return tuners_; }
  // The running agent knows irqbalance's sleep interval: its restore waits
  // as long as an exchange there can take.
  NeighbourRestoreOps restore_ops() const {
    NeighbourRestoreOps ops{ops_.irqbalance.get(), ops_.numad.get()};
    ops.timeout =
        std::max(ops.timeout, IrqbalanceExchangeWait(bans_.sleep_seconds()));
    return ops;
  }

 private:
  NeighbourOps ops_;
  Journal* journal_;
  IrqbalanceBans bans_;
  NumadExclusions exclusions_;
  HostTuners tuners_;
  CoexistModes modes_;
  // IRQs the plan would move, with when it last asked (the Tick before).
  std::map<int, absl::Time> asked_;
  absl::Time now_ = absl::InfinitePast();
};

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_NEIGHBOURS_NEIGHBOURS_H_
