// The undo journal reader. Each input is replayed twice: as it is (most
// lines then fail their CRC), and "sealed", with every complete line taken
// as a record body and given its correct CRC, so the fuzzer reaches the
// record syntax behind the checksum. Fed in pieces (as the file is read),
// the result must be the same as fed whole.
#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"
#include "agent/journal/journal.h"
#include "fuzz_check.h"

namespace {

std::string Seal(absl::string_view text) {
  std::string out;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    if (newline == absl::string_view::npos) {
      out.append(text.data(), text.size());  // a torn tail stays torn
      break;
    }
    absl::string_view body = text.substr(0, newline);
    text.remove_prefix(newline + 1);
    absl::StrAppendFormat(&out, "%s %08x\n", body, locus::Crc32(body));
  }
  return out;
}

void Check(const locus::JournalContents& journal) {
  // The first kMaxJournalProblems are named, then one line counts the rest.
  const size_t all = static_cast<size_t>(journal.corrupt_records) +
                     (journal.truncated_tail ? 1 : 0);
  const size_t named = std::min<size_t>(all, locus::kMaxJournalProblems);
  LOCUS_FUZZ_CHECK(journal.problems.size() == named + (all > named ? 1 : 0));
  for (const auto& [tid, entry] : journal.threads) {
    LOCUS_FUZZ_CHECK(tid == entry.tid);
    LOCUS_FUZZ_CHECK(!entry.cpus.empty());
    LOCUS_FUZZ_CHECK(locus::fuzz::StrictlyAscending(entry.cpus));
  }
  for (const auto& [irq, entry] : journal.irqs) {
    LOCUS_FUZZ_CHECK(irq == entry.irq);
    LOCUS_FUZZ_CHECK(!entry.cpus.empty());
    LOCUS_FUZZ_CHECK(locus::fuzz::StrictlyAscending(entry.cpus));
  }
}

}  // namespace

// The same text fed in pieces of `piece` bytes replays the same.
void CheckPieces(absl::string_view text, const locus::JournalContents& whole,
                 size_t piece) {
  locus::JournalParser parser("journal");
  for (size_t at = 0; at < text.size(); at += piece) {
    parser.Feed(text.substr(at, piece));
  }
  locus::JournalContents pieces = std::move(parser).Finish();
  LOCUS_FUZZ_CHECK(pieces.problems == whole.problems);
  LOCUS_FUZZ_CHECK(pieces.threads.size() == whole.threads.size());
  LOCUS_FUZZ_CHECK(pieces.irqs.size() == whole.irqs.size());
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text = locus::fuzz::AsText(data, size);
  const std::string sealed = Seal(text);
  for (absl::string_view input : {text, absl::string_view(sealed)}) {
    locus::JournalContents whole = locus::ParseJournal(input, "journal");
    Check(whole);
    CheckPieces(input, whole, 1 + size % 13);
  }
  return 0;
}
