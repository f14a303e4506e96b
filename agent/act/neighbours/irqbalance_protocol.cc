#include "agent/act/neighbours/irqbalance_protocol.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/printable.h"

namespace locus {
namespace {

// The words of one IRQ entry: "IRQ n LOAD n DIFF n CLASS n".
constexpr size_t kIrqEntryWords = 8;

absl::Status Malformed(absl::string_view reply, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("irqbalance's reply to 'setup' ", why, " (reply: '",
                   Printable(reply, kMaxQuotedBytes), "')"));
}

bool IsMask(absl::string_view word) {
  if (word.empty()) return false;
  for (char c : word) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c)) && c != ',') {
      return false;
    }
  }
  return true;
}

// Checks words[at] == key and parses words[at + 1] into `value`.
template <typename T>
bool KeyValue(const std::vector<absl::string_view>& words, size_t at,
              absl::string_view key, T* value) {
  return at + 1 < words.size() && words[at] == key &&
         absl::SimpleAtoi(words[at + 1], value);
}

// One "IRQ n LOAD n DIFF n CLASS n" entry at words[at].
absl::Status ParseIrqEntry(absl::string_view reply,
                           const std::vector<absl::string_view>& words,
                           size_t at, std::set<int>* irqs) {
  int irq = 0;
  uint64_t load = 0;
  uint64_t diff = 0;
  int irq_class = 0;
  if (!KeyValue(words, at, "IRQ", &irq) ||
      !KeyValue(words, at + 2, "LOAD", &load) ||
      !KeyValue(words, at + 4, "DIFF", &diff) ||
      !KeyValue(words, at + 6, "CLASS", &irq_class)) {
    return Malformed(reply, absl::StrCat("has no 'IRQ n LOAD n DIFF n CLASS n'"
                                         " entry at word ",
                                         at + 1));
  }
  if (!irqs->insert(irq).second) {
    return Malformed(reply, absl::StrCat("lists IRQ ", irq, " twice"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<IrqbalanceSetup> ParseIrqbalanceSetup(absl::string_view reply) {
  if (reply.empty()) {
    return Malformed(reply,
                     "is empty: irqbalance closed without answering (it "
                     "answers only a sender whose credentials say root)");
  }
  const std::vector<absl::string_view> words =
      absl::StrSplit(reply, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  IrqbalanceSetup setup;
  if (!KeyValue(words, 0, "SLEEP", &setup.sleep_seconds) ||
      setup.sleep_seconds < 1) {
    return Malformed(reply, "does not start with 'SLEEP <seconds>'");
  }
  size_t at = 2;
  while (at < words.size() && words[at] == "IRQ") {
    absl::Status entry = ParseIrqEntry(reply, words, at, &setup.banned_irqs);
    if (!entry.ok()) return entry;
    at += kIrqEntryWords;
  }
  if (at + 1 >= words.size() || words[at] != "BANNED" ||
      !IsMask(words[at + 1])) {
    return Malformed(
        reply, absl::StrCat("has no 'BANNED <cpu mask>' at word ", at + 1));
  }
  if (at + 2 != words.size()) {
    return Malformed(
        reply, absl::StrCat("goes on after the CPU mask, at word ", at + 3));
  }
  setup.banned_cpus = std::string(words[at + 1]);
  return setup;
}

absl::StatusOr<std::string> FormatBanIrqs(const std::set<int>& irqs) {
  constexpr absl::string_view kPrefix = "settings ban irqs ";
  if (irqs.empty()) return absl::StrCat(kPrefix, "NONE");
  if (*irqs.begin() <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "IRQ ", *irqs.begin(),
        " cannot be sent to irqbalance: it reads its list up to the first 0 "
        "(and IRQ numbers are positive)"));
  }
  std::string command = absl::StrCat(kPrefix, absl::StrJoin(irqs, " "));
  if (command.size() > kMaxIrqbalanceCommandBytes) {
    return absl::OutOfRangeError(absl::StrCat(
        irqs.size(), " IRQs make a command of ", command.size(),
        " bytes; irqbalance reads at most ", kMaxIrqbalanceCommandBytes,
        " and would unban the IRQs past that"));
  }
  return command;
}

}  // namespace locus
