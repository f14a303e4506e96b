// The undo journal: the original value of every thread affinity and IRQ
// affinity Locus changes, on disk before the change is made, so that exit,
// `locusd --restore` and a restart after a crash can put everything back.
//
// Format: one text line per record, appended with a single write(2) and
// fdatasync(2):
//
//   T <pid> <tid> <start_time> <cpulist> <crc32>   original thread affinity
//   I <irq> <cpulist> <crc32>                      original IRQ affinity
//   -T <tid> <crc32>                               forget thread entry
//   -I <irq> <crc32>                               forget IRQ entry
//
// Why lines with a CRC32 per record: appends are the only write, so a crash
// can only damage the tail; a record is complete when it ends in '\n' and its
// CRC32 (of the text before the last space, 8 hex digits) matches, so a torn
// or zero-filled tail (ext4 data=writeback after power loss) is detected and
// every complete record before it still counts. Text keeps it readable with
// `cat` when an operator has to restore by hand. Forgetting is a record too
// (no rewrite-in-place, which a crash could tear); clearing deletes the file.
// The start time (clock ticks since boot, /proc/TID/stat field 22) makes the
// thread key unique, so a recycled TID is never "restored".
#ifndef LOCUS_AGENT_ACT_JOURNAL_H_
#define LOCUS_AGENT_ACT_JOURNAL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/defaults.h"
#include "common/unique_fd.h"

namespace locus {

struct JournalOptions {
  std::string path = kDefaultJournalPath;
};

struct ThreadEntry {
  int32_t pid = 0;
  int32_t tid = 0;
  uint64_t start_time = 0;
  std::vector<int> cpus;  // original affinity
};

struct IrqEntry {
  int irq = 0;
  std::vector<int> cpus;  // original smp_affinity_list
};

// What a journal file holds once replayed: live entries, and what was wrong.
struct JournalContents {
  std::map<int32_t, ThreadEntry> threads;  // by tid
  std::map<int, IrqEntry> irqs;            // by irq
  int corrupt_records = 0;                 // complete lines, bad CRC/syntax
  bool truncated_tail = false;             // last line without '\n'
  std::vector<std::string> problems;       // "<path>:<line>: <why>"
};

// Replays journal text (pure; for tests and for ReadJournal).
JournalContents ParseJournal(absl::string_view text, absl::string_view path);

// Reads and replays the journal file; a missing file is an empty journal.
absl::StatusOr<JournalContents> ReadJournal(const std::string& path);

// CRC-32 (IEEE, as zlib's crc32) of `data`.
uint32_t Crc32(absl::string_view data);

class Journal {
 public:
  // Loads what an earlier run left (a crash) and prepares to append. Never
  // fails for an unwritable location: that is found when a record is written,
  // and then every change is refused (see Record*).
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

  bool HasThread(int32_t tid) const { return contents_.threads.count(tid); }
  bool HasIrq(int irq) const { return contents_.irqs.count(irq); }
  const JournalContents& contents() const { return contents_; }
  const std::string& path() const { return options_.path; }

  // Why the last record could not be written (read-only or full directory,
  // damaged file); OK once a record is written again. While it is not OK
  // the agent changes nothing, and says so (status, metrics).
  const absl::Status& last_error() const { return last_error_; }

  // Deletes the file (fsyncing the directory) and forgets every entry: called
  // once everything has been restored.
  absl::Status Clear();

 private:
  explicit Journal(JournalOptions options) : options_(std::move(options)) {}
  absl::Status Append(const std::string& body);  // sets last_error_
  absl::Status AppendRecord(const std::string& body);
  absl::Status EnsureOpen();

  JournalOptions options_;
  JournalContents contents_;
  UniqueFd fd_;
  absl::Status broken_;  // first write error; OK while healthy
  absl::Status last_error_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_JOURNAL_H_
