#include "agent/act/neighbours/neighbours.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/act/neighbours/irqbalance_socket.h"
#include "agent/act/neighbours/numad_queue.h"

namespace locus {

NeighbourOps MakeNeighbourOps(const std::string& procfs_root) {
  NeighbourOps ops;
  ops.irqbalance = MakeIrqbalanceSocketOps(procfs_root);
  ops.numad = MakeNumadQueueOps(procfs_root);
  ops.tuners.procfs_root = procfs_root;
  return ops;
}

Neighbours::Neighbours(NeighbourOps ops, Journal* journal)
    : ops_(std::move(ops)),
      journal_(journal),
      bans_(*ops_.irqbalance, *journal),
      exclusions_(*ops_.numad, *journal),
      tuners_(ops_.tuners) {}

std::optional<std::string> Neighbours::WaitFor(int irq) {
  if (!modes_.irqbalance_ban) return std::nullopt;
  // Wanted while the plan asks for it, banned or not: an IRQ it stopped
  // asking for only while banned would be given back and then moved.
  asked_[irq] = now_;
  if (bans_.Banned(irq)) return std::nullopt;
  const IrqbalanceState& state = bans_.state();
  if (!state.problem.empty()) {
    return absl::StrCat("irq ", irq, ": waiting for irqbalance (pid ",
                        state.pid, ") to ban it: ", state.problem);
  }
  return absl::StrCat("irq ", irq, ": waiting for irqbalance (pid ", state.pid,
                      ") to ban it; moved once it has");
}

void Neighbours::Tick(const CoexistModes& modes,
                      std::optional<int> numa_balancing, absl::Time now) {
  modes_ = modes;
  now_ = now;
  const JournalContents& journaled = journal_->contents();
  std::set<int> irqs;
  // An IRQ the plan asked for stays wanted a while: the plan does not
  // propose every move on every tick, and a ban takes irqbalance's scan.
  std::erase_if(asked_, [&](const auto& asked) {
    return !modes.irqbalance_ban || now - asked.second > kAskedIrqHold;
  });
  if (modes.irqbalance_ban) {
    for (const auto& [irq, at] : asked_) irqs.insert(irq);
    for (const auto& [irq, entry] : journaled.irqs) irqs.insert(irq);
  }
  bans_.Tick(irqs, now);

  std::set<int32_t> workers;
  if (modes.numad_exclude) {
    for (const auto& [tid, entry] : journaled.threads) {
      workers.insert(entry.pid);
    }
  }
  exclusions_.Tick(workers);
  tuners_.Tick(now, numa_balancing);
}

}  // namespace locus
