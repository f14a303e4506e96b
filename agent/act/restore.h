// Putting back what the journal says: on SIGTERM/SIGINT, at start when a
// crashed run left a journal, and for `locusd --restore`: thread and IRQ
// affinities, and steering programs detached from their reuseport groups.
#ifndef LOCUS_AGENT_ACT_RESTORE_H_
#define LOCUS_AGENT_ACT_RESTORE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/act/kernel_ops.h"
#include "agent/journal/journal.h"

namespace locus {

struct SteeringRestoreOps;   // agent/act/connections/reuseport_restore.h
struct NeighbourRestoreOps;  // agent/act/neighbours/neighbours.h

struct RestoreReport {
  int threads_restored = 0;
  int irqs_restored = 0;
  int groups_detached = 0;  // reuseport groups freed of a steering program
  int dropped = 0;  // thread, IRQ or group no longer exists (or TID recycled)
  int corrupt_records = 0;
  bool truncated_tail = false;
  std::string journal;    // the journal restored from (resolved path)
  std::string kept_copy;  // where a journal with damaged records was kept
  std::vector<std::string> messages;  // one per entry: what was done
  std::vector<std::string> errors;    // entries that could not be restored
  // Records whose undo failed for a reason that can pass (irqbalance or
  // numad did not answer, or could not be told apart): the journal is the
  // only trace of what is Locus's there, so they stay in it, for the
  // running agent, the next start or the next `locusd --restore`.
  std::map<int, int32_t> kept_bans;            // irq -> irqbalance pid
  std::map<int32_t, int32_t> kept_exclusions;  // worker pid -> numad pid
  size_t kept() const { return kept_bans.size() + kept_exclusions.size(); }
  bool ok() const { return errors.empty(); }
};

// "partial restore: ..." naming the records kept and where; empty when
// none was.
std::string KeptRecordsLine(const RestoreReport& report);

// Once RestoreEntries has run: deletes the journal (Journal::Clear), or,
// when records were kept, forgets every other entry (forget records, as
// any undo is written) so that the file holds those alone; a journal whose
// reading dropped something is set aside (Clear) and the kept records
// written to a new one.
absl::Status ClearRestored(Journal& journal, const RestoreReport& report);

// Restores every entry (best effort: one failure does not stop the rest).
// Steering entries are detached through `steering`: each group is looked
// for by its key among every process's sockets and detached through the
// first member that can still be duplicated; a group no process holds is
// dropped (its program went with its sockets). Without `steering` (a
// process that cannot load BPF) each is an error naming the group.
// Last, once each IRQ has its affinity back, the IRQs Locus banned in an
// irqbalance still running are unbanned and the workers it put on a running
// numad's exclusion list taken off, through `neighbours` (or, without, the
// host's own irqbalance and numad).
RestoreReport RestoreEntries(const JournalContents& contents,
                             ThreadOps& threads, IrqOps& irqs,
                             const SteeringRestoreOps* steering = nullptr,
                             const NeighbourRestoreOps* neighbours = nullptr);

// Reads the journal at options.path, restores every complete entry (a torn
// last record is reported and ignored) and deletes the file (or sets it
// aside, when it had damaged records), keeping what the report says it
// kept (ClearRestored). Fails when the journal cannot be read
// or deleted, and, before restoring anything, when it could not be deleted
// afterwards (a read-only mount): the same restore would otherwise run again
// at every start, over whatever the admin changed since. Per-entry failures
// are in the report.
absl::StatusOr<RestoreReport> RestoreJournal(
    const JournalOptions& options, ThreadOps& threads, IrqOps& irqs,
    const SteeringRestoreOps* steering = nullptr,
    const NeighbourRestoreOps* neighbours = nullptr);

// The same against the running kernel (/proc, /sys, /sys/fs/cgroup), for
// threads and IRQs only: `locusd --restore` (agent/daemon/restore_mode.h)
// adds the real steering ops, which need libbpf (locus_act_reuseport).
absl::StatusOr<RestoreReport> RestoreJournal(const JournalOptions& options);

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_RESTORE_H_
