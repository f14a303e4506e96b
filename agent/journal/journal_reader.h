// Reading the undo journal (its format is described in journal.h): line by
// line from a stream, so that a journal of any size, junk included, costs
// one read buffer and one line of memory beyond its live entries, and a log
// of at most kMaxJournalProblems lines.
#ifndef LOCUS_AGENT_JOURNAL_JOURNAL_READER_H_
#define LOCUS_AGENT_JOURNAL_JOURNAL_READER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/host/listeners.h"

namespace locus {

// Damaged records named one by one; past this only a count.
inline constexpr int kMaxJournalProblems = 20;
// The longest line read as a record (a thread record on a host of thousands
// of CPUs stays well under it); a longer one is damaged.
inline constexpr size_t kMaxJournalLine = 64 * 1024;

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
  std::set<ListenKey> steered;             // groups with a steering program
  // IRQs Locus added to an irqbalance's ban list: irq -> that irqbalance's
  // pid (a restarted irqbalance forgot them).
  std::map<int, int32_t> irqbalance_bans;
  // Processes Locus put on a numad's exclusion list: pid -> numad's pid.
  std::map<int32_t, int32_t> numad_exclusions;
  // Complete lines with a bad CRC or syntax, and a last line without '\n'
  // longer than any record (junk, not a torn append).
  int corrupt_records = 0;
  bool truncated_tail = false;  // a short last line without '\n'
  // "<path>:<line>: <why>" for the first kMaxJournalProblems damaged
  // records (the torn tail included), then one line saying how many more.
  std::vector<std::string> problems;
  // Whether replaying dropped anything the file holds: then the file is
  // kept (as "<path>.bad.<time>") when the journal is cleared.
  bool dropped_content() const { return corrupt_records > 0 || truncated_tail; }
};

// CRC-32 (IEEE, as zlib's crc32) of `data`.
uint32_t Crc32(absl::string_view data);

// "127.0.0.1:80", "[::1]:443" (as ListenAddressString writes them) back
// into `group`'s family, bytes and port; InvalidArgument with why otherwise.
absl::Status ParseListenAddress(absl::string_view text, ListenAddress* address);

// Replays journal text fed in pieces of any size.
class JournalParser {
 public:
  explicit JournalParser(absl::string_view path) : path_(path) {}
  void Feed(absl::string_view chunk);
  JournalContents Finish() &&;

 private:
  void EndLine();
  void Problem(absl::string_view why);

  std::string path_;
  JournalContents out_;
  std::string line_;       // the line read so far
  bool overlong_ = false;  // the line passed kMaxJournalLine: skip to its end
  int line_number_ = 0;
  int problems_ = 0;  // all of them, listed or not
};

// Replays journal text (pure; for tests and fuzzers).
JournalContents ParseJournal(absl::string_view text, absl::string_view path);

// Reads and replays the journal file; a missing file is an empty journal,
// anything but a regular file an error.
absl::StatusOr<JournalContents> ReadJournal(const std::string& path);

}  // namespace locus

#endif  // LOCUS_AGENT_JOURNAL_JOURNAL_READER_H_
