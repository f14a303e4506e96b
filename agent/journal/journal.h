// The undo journal: the original value of every thread affinity and IRQ
// affinity Locus changes, and every reuseport group it attaches a steering
// program to, on disk before the change is made, so that exit,
// `locusd --restore` and a restart after a crash can put everything back.
//
// Format: one text line per record, appended with a single write(2) and
// fdatasync(2):
//
//   T <pid> <tid> <start_time> <cpulist> <crc32>   original thread affinity
//   I <irq> <cpulist> <crc32>                      original IRQ affinity
//   -T <tid> <crc32>                               forget thread entry
//   -I <irq> <crc32>                               forget IRQ entry
//   R <netns> <address:port> <crc32>               steering program attached
//   -R <netns> <address:port> <crc32>              forget steering entry
//   B <irqbalance pid> <irq> <crc32>               Locus banned the IRQ there
//   -B <irq> <crc32>                               forget that ban
//   N <numad pid> <pid> <crc32>                    Locus excluded pid there
//   -N <pid> <crc32>                               forget that exclusion
//
// A steering record names the group as the kernel keys it: the inode of the
// network namespace and the bound address ("127.0.0.1:80", "[::]:443"); a
// restore finds the group's sockets again by that key in /proc, since
// the sockets, fds and processes of a crashed run's view may be gone.
//
// Why lines with a CRC32 per record: appends are the only write, so a crash
// can only damage the tail; a record is complete when it ends in '\n' and its
// CRC32 (of the text before the last space, 8 hex digits) matches, so a torn
// or zero-filled tail (ext4 data=writeback after power loss) is detected and
// every complete record before it still counts. Text keeps it readable with
// `cat` when an operator has to restore by hand. Forgetting is a record too
// (no rewrite-in-place, which a crash could tear); clearing deletes the file,
// or, when reading it dropped anything (damaged records, a torn or overlong
// tail), sets it aside as "<path>.bad.<UTC time>" so that what they held can
// still be recovered by hand.
// While a Journal has the file (from Open, or from the record that creates
// it, until Clear), it holds the file's own lock (journal_lock.h): no other
// daemon can open it by any name, a hard link included.
// The start time (clock ticks since boot, /proc/TID/stat field 22) makes the
// thread key unique, so a recycled TID is never "restored".
#ifndef LOCUS_AGENT_JOURNAL_JOURNAL_H_
#define LOCUS_AGENT_JOURNAL_JOURNAL_H_

#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/journal/journal_reader.h"
#include "common/defaults.h"
#include "common/unique_fd.h"

namespace locus {

struct JournalOptions {
  std::string path = kDefaultJournalPath;
};

// The journal's real location: `path` with every symlink, in its directory
// or its last component, resolved. What the instance lock is keyed on and
// what Journal reads, appends to and deletes, so that two paths to one file
// are one journal. A directory that does not exist yet is taken as given.
absl::StatusOr<std::string> ResolveJournalPath(const std::string& path);

class Journal {
 public:
  // Loads what an earlier run left (a crash) and prepares to append. Never
  // fails for an unwritable location: that is found when a record is written,
  // and then every change is refused (see Record*). Fails (FailedPrecondition)
  // when another open file holds the journal's lock: another daemon's.
  static absl::StatusOr<std::unique_ptr<Journal>> Open(
      const JournalOptions& options);

  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Appends and fsyncs the original value, unless this entity already has
  // an entry (the first original is the one to restore). On error nothing
  // may be changed: the journal is marked broken and every later record
  // fails too, so a torn record is never followed by good ones.
  absl::Status RecordThread(const ThreadEntry& entry);
  absl::Status RecordIrq(const IrqEntry& entry);

  // Drops an entry (the entity is gone, or someone else owns it now).
  absl::Status ForgetThread(int32_t tid);
  absl::Status ForgetIrq(int irq);

  // "R" and "-R" records, with the same rules (one entry per group, a
  // failed record refuses the attach). JournalSteering
  // (agent/act/connections/steering_journal.h) offers them to connection
  // steering.
  absl::Status RecordSteered(const ListenKey& group);
  absl::Status ForgetSteered(const ListenKey& group);

  // "B"/"N" records: what Locus handed a neighbour (irqbalance's ban
  // list, numad's exclusion list; agent/act/neighbours/), under that
  // neighbour's pid. Recording again under another pid (the neighbour
  // restarted) replaces the entry.
  absl::Status RecordIrqbalanceBan(int32_t irqbalance_pid, int irq);
  absl::Status RecordNumadExclusion(int32_t numad_pid, int32_t pid);
  absl::Status ForgetNumadExclusion(int32_t pid);
  // Forget every entry for which `which(id, neighbour_pid)` holds (an IRQ
  // for irqbalance, a worker's pid for numad); stops at the first record
  // that cannot be written.
  using OwnedFilter = absl::FunctionRef<bool(int32_t id, int32_t owner)>;
  absl::Status ForgetIrqbalanceBansWhere(OwnedFilter which);
  absl::Status ForgetNumadExclusionsWhere(OwnedFilter which);

  bool HasIrqbalanceBan(int irq) const {
    return contents_.irqbalance_bans.count(irq);
  }
  bool HasNumadExclusion(int32_t pid) const {
    return contents_.numad_exclusions.count(pid);
  }
  bool HasThread(int32_t tid) const { return contents_.threads.count(tid); }
  bool HasIrq(int irq) const { return contents_.irqs.count(irq); }
  bool HasSteered(const ListenKey& group) const {
    return contents_.steered.count(group);
  }
  const JournalContents& contents() const { return contents_; }
  const std::string& path() const { return options_.path; }

  // Why the last record could not be written (read-only or full directory,
  // damaged file); OK once a record is written again. While it is not OK
  // the agent changes nothing, and says so (status, metrics).
  const absl::Status& last_error() const { return last_error_; }

  // Whether Clear() can remove the file: FailedPrecondition when its
  // directory is not writable (a read-only mount). Checked before a restore,
  // which must not run again at every start because the file stays.
  absl::Status CheckClearable() const;

  // Deletes the file (fsyncing the directory) and forgets every entry: called
  // once everything has been restored. A file whose reading dropped
  // anything (JournalContents::dropped_content) is renamed to
  // "<path>.bad.<time>" instead (see kept_copy()).
  absl::Status Clear();

  // Where the last Clear() set a damaged journal aside; empty if it did not.
  const std::string& kept_copy() const { return kept_copy_; }

 private:
  explicit Journal(JournalOptions options) : options_(std::move(options)) {}
  absl::Status Append(const std::string& body);  // sets last_error_
  absl::Status AppendRecord(const std::string& body);
  absl::Status EnsureOpen();
  absl::Status Hold(int fd);

  JournalOptions options_;
  JournalContents contents_;
  UniqueFd fd_;
  // Holds the lock on the file (LockJournalFile) while this Journal has one.
  UniqueFd held_;
  absl::Status broken_;  // first write error; OK while healthy
  absl::Status last_error_;
  std::string kept_copy_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_JOURNAL_JOURNAL_H_
