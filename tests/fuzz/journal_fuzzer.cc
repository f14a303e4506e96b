// The undo journal reader. Each input is replayed twice: as it is (most
// lines then fail their CRC), and "sealed", with every complete line taken
// as a record body and given its correct CRC, so the fuzzer reaches the
// record syntax behind the checksum.
#include "absl/strings/str_format.h"
#include "agent/act/journal.h"
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
  LOCUS_FUZZ_CHECK(journal.problems.size() ==
                   static_cast<size_t>(journal.corrupt_records) +
                       (journal.truncated_tail ? 1 : 0));
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

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text = locus::fuzz::AsText(data, size);
  Check(locus::ParseJournal(text, "journal"));
  Check(locus::ParseJournal(Seal(text), "journal"));
  return 0;
}
