// irqbalance's reply to "setup" (read from its control socket: another
// daemon's bytes), and the ban command Locus builds back from the list it
// read: Locus sends the admin's bans back with its own, so what the parser
// accepts must make a command irqbalance reads as the same list, or none.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "agent/act/neighbours/irqbalance_protocol.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<locus::IrqbalanceSetup> setup =
      locus::ParseIrqbalanceSetup(locus::fuzz::AsText(data, size));
  if (!setup.ok()) return 0;
  LOCUS_FUZZ_CHECK(setup->sleep_seconds >= 1);
  LOCUS_FUZZ_CHECK(!setup->banned_cpus.empty());
  absl::StatusOr<std::string> command =
      locus::FormatBanIrqs(setup->banned_irqs);
  if (!command.ok()) {
    // Refused only for what irqbalance would misread: a number it stops at
    // (0 or less), or a list longer than it reads.
    LOCUS_FUZZ_CHECK(
        command.status().code() == absl::StatusCode::kOutOfRange ||
        (command.status().code() == absl::StatusCode::kInvalidArgument &&
         *setup->banned_irqs.begin() <= 0));
    return 0;
  }
  LOCUS_FUZZ_CHECK(command->size() <= locus::kMaxIrqbalanceCommandBytes);
  const std::vector<std::string> words = absl::StrSplit(*command, ' ');
  LOCUS_FUZZ_CHECK(words.size() >= 4 && words[0] == "settings" &&
                   words[1] == "ban" && words[2] == "irqs");
  std::set<int> sent;
  for (size_t i = 3; i < words.size(); ++i) {
    if (words[i] == "NONE" && words.size() == 4) break;
    int irq = 0;
    LOCUS_FUZZ_CHECK(absl::SimpleAtoi(words[i], &irq) && irq > 0);
    sent.insert(irq);
  }
  LOCUS_FUZZ_CHECK(sent == setup->banned_irqs);
  return 0;
}
