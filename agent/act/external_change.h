// An entity Locus had set that someone else has moved since: the thread
// placer and the IRQ setter report it alike, and back off from it for good.
#ifndef LOCUS_AGENT_ACT_EXTERNAL_CHANGE_H_
#define LOCUS_AGENT_ACT_EXTERNAL_CHANGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "policy/cpu_list.h"

namespace locus {

struct ExternalChange {
  enum class Kind { kThread, kIrq };
  Kind kind = Kind::kThread;
  int32_t id = 0;             // tid or irq
  int32_t pid = 0;            // the thread's process; 0 for an IRQ
  std::vector<int> expected;  // what Locus set
  std::vector<int> actual;    // what it is now
  std::string message;
};

// "<who>: affinity is <actual>, Locus set <expected>: ..., backing off".
inline std::string BackOffMessage(absl::string_view who,
                                  const std::vector<int>& expected,
                                  const std::vector<int>& actual) {
  return absl::StrCat(who, ": affinity is ", FormatCpuList(actual),
                      ", Locus set ", FormatCpuList(expected),
                      ": someone else moved it, backing off");
}

}  // namespace locus

#endif  // LOCUS_AGENT_ACT_EXTERNAL_CHANGE_H_
