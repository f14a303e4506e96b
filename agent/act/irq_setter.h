// IRQ affinity: /proc/irq/N/smp_affinity_list, journaled first. A write the
// kernel refuses with EIO (up to 6.x) or EPERM (6.18, measured on a virtio-blk
// queue) means it manages the IRQ's affinity (managed MSI-X): marked
// unmanageable and never tried again. Root owns the file, so EPERM cannot be
// a permission problem (that would be EACCES at open, or EROFS).
#ifndef LOCUS_AGENT_ACT_IRQ_SETTER_H_
#define LOCUS_AGENT_ACT_IRQ_SETTER_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "agent/act/external_change.h"
#include "agent/act/kernel_ops.h"
#include "agent/act/result.h"
#include "agent/journal/journal.h"
#include "policy/plan.h"

namespace locus {

class IrqSetter {
 public:
  // `ops` and `journal` are borrowed and must outlive the setter.
  IrqSetter(IrqOps* ops, Journal* journal, bool dry_run)
      : ops_(ops), journal_(journal), dry_run_(dry_run) {}

  ActionResult Apply(const SetIrqAffinity& set) { return Apply(set, dry_run_); }
  ActionResult Apply(const SetIrqAffinity& set, bool dry_run);

  // Puts one IRQ back to its journaled original and forgets it. OK when
  // there is nothing to undo or the IRQ is gone.
  absl::Status Revert(int irq);

  // As ThreadPlacer::CheckExternalChanges, for IRQs.
  std::vector<ExternalChange> CheckExternalChanges();

  // IRQs found kernel-managed; the host model reports them as managed.
  const std::set<int>& unmanageable() const { return unmanageable_; }
  bool BackedOff(int irq) const { return backed_off_.count(irq) > 0; }
  void MarkUnmanageable(int irq) { unmanageable_.insert(irq); }

 private:
  // Journals `entry` (the IRQ's affinity now), then writes `target`.
  ActionResult Move(IrqEntry entry, const std::vector<int>& target,
                    const std::string& change);

  IrqOps* ops_;
  Journal* journal_;
  bool dry_run_;
  std::map<int, std::vector<int>> placed_;  // what Locus set
  std::set<int> unmanageable_;
  std::set<int> backed_off_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_IRQ_SETTER_H_
